"""Ray's actor checkpointing example: an immortal actor that saves its state to a file.

The documentation's ``ImmortalActor`` (``max_restarts=-1, max_task_retries=-1``)
writes its state to a checkpoint file after each update and reads it back in
its constructor; its ``update`` exits the worker with ``sys.exit(1)`` at
random, and Ray restarts the actor and retries the call, so the driver sees
every update applied. Here the exit comes on the first attempt of some keys
(remembered in a file, as the process does not survive) instead of at
random, so that each run is one program.

``run_exit_statuses`` shows how Ray reads each status: ``sys.exit(0)`` is
an intended exit (the actor dies for good, and the call with it), any other
status, ``sys.exit()`` included, a crash (restart, retry).

Bug variant: ``run_without_checkpoint``, whose actor keeps its state in memory
only: the restarted actor has lost the updates made before the exit.
"""

import json
import os
import sys
import tempfile

import ray


@ray.remote(max_restarts=-1, max_task_retries=-1)
class ImmortalActor:
    def __init__(self, checkpoint_file, checkpointing=True):
        self.checkpoint_file = checkpoint_file
        self.checkpointing = checkpointing
        if os.path.exists(self.checkpoint_file):
            with open(self.checkpoint_file) as f:
                self.state = json.load(f)
        else:
            self.state = {}

    def update(self, key, value, exit_first=False):
        marker = f"{self.checkpoint_file}.{key}.exited"
        if exit_first and not os.path.exists(marker):
            open(marker, "w").close()
            sys.exit(1)
        self.state[key] = value
        if self.checkpointing:
            # Checkpoint the latest state
            with open(self.checkpoint_file, "w") as f:
                json.dump(self.state, f)

    def get(self, key):
        return self.state[key]


def _drive(checkpointing):
    checkpoint_dir = tempfile.mkdtemp()
    actor = ImmortalActor.remote(os.path.join(checkpoint_dir, "checkpoint.json"), checkpointing)
    for i in range(4):
        ray.get(actor.update.remote(f"key-{i}", i, exit_first=i in (1, 3)))
    got = [ray.get(actor.get.remote(f"key-{i}")) for i in range(4)]
    assert got == [0, 1, 2, 3], got
    return got


def run():
    return _drive(True)


def run_without_checkpoint():
    return _drive(False)


@ray.remote(max_restarts=-1, max_task_retries=-1)
class Exiter:
    def __init__(self, marker_dir):
        self.marker_dir = marker_dir

    def exit_once(self, status):
        marker = os.path.join(self.marker_dir, f"exited-{status}")
        if not os.path.exists(marker):
            open(marker, "w").close()
            sys.exit(status)
        return "retried"

    def ping(self):
        return "alive"


def run_exit_statuses():
    outcomes = {}
    for status in (0, None, 2):
        actor = Exiter.remote(tempfile.mkdtemp())
        try:
            result = ray.get(actor.exit_once.remote(status))
        except ray.exceptions.ActorDiedError:
            result = "died"
        try:
            alive = ray.get(actor.ping.remote())
        except ray.exceptions.ActorDiedError:
            alive = "dead"
        outcomes[str(status)] = [result, alive]
    assert outcomes == {"0": ["died", "dead"], "None": ["retried", "alive"], "2": ["retried", "alive"]}, outcomes
    return outcomes
