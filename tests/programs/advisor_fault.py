"""A parameter server that checkpoints every second version and restarts from its checkpoint.

The driver pulls the weights and pushes a gradient three times. The server
declares ``max_restarts`` (Ray restarts it after a crash, re-running its
constructor, which reloads the last checkpoint) and ``max_task_retries`` (a
call lost in the crash runs again; a push already applied is not applied
twice). A crash after an acknowledged push that
was not checkpointed yet (the first or the third) loses that update: the
final weights are short of three. ``checkpoint_every_push`` persists every
change and is correct under any crash.
"""

import ray


@ray.remote
class Checkpoints:
    def __init__(self):
        self.saved = (0, 0.0)

    def save(self, version, weights):
        self.saved = (version, weights)

    def load(self):
        return self.saved


@ray.remote(max_restarts=1, max_task_retries=1)
class ParameterServer:
    def __init__(self, checkpoints, every):
        self.checkpoints = checkpoints
        self.every = every
        self.version, self.weights = ray.get(checkpoints.load.remote())

    def pull(self):
        return self.weights

    def push(self, step, gradient):
        if step <= self.version:
            return self.version  # a retry of a push already applied (and checkpointed)
        self.weights += gradient
        self.version = step
        if self.version % self.every == 0:
            ray.get(self.checkpoints.save.remote(self.version, self.weights))
        return self.version


def _train(every):
    ray.init()
    server = ParameterServer.remote(Checkpoints.remote(), every)
    for step in range(1, 4):
        ray.get(server.pull.remote())
        ray.get(server.push.remote(step, 1.0))
    weights = ray.get(server.pull.remote())
    assert weights == 3.0, f"lost update: the weights are {weights} after three pushes of 1.0"


def main():
    _train(every=2)


def checkpoint_every_push():
    _train(every=1)
