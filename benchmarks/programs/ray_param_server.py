"""A Ray parameter server trained by asynchronous workers.

The parameter server is an async actor (its RPCs are coroutines, so a slow
``push`` that awaits a checkpoint write does not block ``pull``). Workers are
actors that loop: pull the weights and their version, compute a gradient on
their data shard, push it with the version it was computed from. The server
applies a gradient only when it is at most ``MAX_LAG`` versions stale and
tells the worker to refresh otherwise (bounded-staleness SGD).

Correctness (``assert``s in the driver): every gradient a worker pushed was
either applied or rejected exactly once, the version equals the number of
applied gradients, and no applied gradient was staler than ``MAX_LAG``.

Entry points (``FUNC()``, Ray):

- ``main_correct``: ``push`` checks staleness and updates the weights under
  an ``asyncio.Lock`` held across its ``await``.
- ``main_bug_lost_update``: ``push`` reads the weights and version, awaits
  the checkpoint write, then writes back ``version + 1``: two pushes that
  interleave at the ``await`` lose one update (the version counts one
  gradient and the weights the other). The lost-update-across-``await``
  pattern of ray-project/ray#44454 (sync and async methods of an async actor
  interleave on one event loop) and of async actor state in general.
- ``main_bug_actor_deadlock``: instead of answering "stale", the server
  calls back into the worker (``ray.get(worker.refresh.remote(...))``) while
  that worker is blocked in ``ray.get(server.push.remote(...))``: a
  worker's sync actor cannot run ``refresh`` until ``run`` returns, so the
  two actors wait for each other, but only in schedules where a gradient
  goes stale. Modelled on ray-project/ray#4604 ("Deadlock about remotecall":
  actor A waits on actor B's task while B's callback waits on A).
- ``main_bug_clip_bumps_version`` (input ``clip``): the server rejects a
  gradient whose norm exceeds ``clip`` but still bumps its version, so for
  small clip norms the version counts updates that never happened. Modelled
  on facebookresearch/optimizers#149 (skipping an update on some ranks left
  their step counters inconsistent with the updates applied).
"""

import asyncio
import math
from typing import Annotated

import ray

from dnsse import Range, emit

DNSSE_SPECS = [
    # A gradient is applied only after a pull happened (a worker computed it from some weights).
    "G(apply -> O(pull))",
    # Every push is answered: applied or rejected.
    "G(push -> F(apply | reject))",
]

DIM = 3
MAX_LAG = 1
LEARNING_RATE = 0.1


def gradient(worker: int, weights: list[float], step: int) -> list[float]:
    """The gradient of a quadratic loss on the worker's shard: pulls weights towards a target."""
    target = [float(worker + 1 + i) for i in range(DIM)]
    return [w - t + 0.01 * step for w, t in zip(weights, target)]


@ray.remote
class ParameterServer:
    def __init__(self, locked: bool, call_back: bool, clip: int = 1000, bump_on_clip: bool = False) -> None:
        self.clip = clip
        self.bump_on_clip = bump_on_clip
        self.weights = [0.0] * DIM
        self.version = 0
        self.applied = 0
        self.rejected = 0
        self.max_applied_lag = 0
        self.locked = locked
        self.call_back = call_back
        self.lock = asyncio.Lock()

    async def pull(self) -> tuple[int, list[float]]:
        emit("pull", version=self.version)
        return self.version, list(self.weights)

    async def push(self, grad: list[float], based_on: int, worker: object = None) -> bool:
        emit("push", based_on=based_on)
        if self.locked:
            async with self.lock:
                return await self._apply_if_fresh(grad, based_on, worker)
        return await self._apply_if_fresh(grad, based_on, worker)

    async def _apply_if_fresh(self, grad: list[float], based_on: int, worker: object) -> bool:
        if self.version - based_on > MAX_LAG:
            if self.call_back and worker is not None:
                # The bug of main_bug_actor_deadlock: a blocking call back into the caller.
                ray.get(worker.refresh.remote(self.version, list(self.weights)))
            self.rejected += 1
            emit("reject", based_on=based_on)
            return False
        if math.sqrt(sum(g * g for g in grad)) > self.clip:
            # Too large a gradient is rejected; the buggy server also bumps the version, as if applied.
            if self.bump_on_clip:
                self.version += 1
            self.rejected += 1
            emit("reject", based_on=based_on)
            return False
        weights, version = list(self.weights), self.version
        await self._checkpoint(version)
        self.weights = [w - LEARNING_RATE * g for w, g in zip(weights, grad)]
        self.version = version + 1
        self.applied += 1
        self.max_applied_lag = max(self.max_applied_lag, version - based_on)
        emit("apply", version=self.version)
        return True

    async def _checkpoint(self, version: int) -> None:
        """Stands for an asynchronous write of the weights to storage."""
        await asyncio.sleep(0)

    async def stats(self) -> dict:
        return {
            "version": self.version,
            "applied": self.applied,
            "rejected": self.rejected,
            "max_applied_lag": self.max_applied_lag,
        }


@ray.remote
class Worker:
    def __init__(self, index: int, server: object) -> None:
        self.index = index
        self.server = server
        self.version = 0
        self.weights = [0.0] * DIM

    def refresh(self, version: int, weights: list[float]) -> None:
        self.version, self.weights = version, weights

    def run(self, steps: int, pass_handle: bool, handle: object = None) -> int:
        pushed = 0
        for step in range(steps):
            self.version, self.weights = ray.get(self.server.pull.remote())
            grad = gradient(self.index, self.weights, step)
            ray.get(self.server.push.remote(grad, self.version, handle if pass_handle else None))
            pushed += 1
        return pushed


Clip = Annotated[int, Range(1, 10_000)]


def train(workers: int, steps: int, locked: bool, call_back: bool, clip: int = 1000, bump_on_clip: bool = False) -> None:
    if not ray.is_initialized():
        ray.init()
    server = ParameterServer.remote(locked, call_back, clip, bump_on_clip)
    actors = [Worker.remote(i, server) for i in range(workers)]
    pushed = sum(ray.get([a.run.remote(steps, call_back, a) for a in actors]))
    stats = ray.get(server.stats.remote())
    assert stats["applied"] + stats["rejected"] == pushed, f"{pushed} pushes, but {stats}"
    assert stats["version"] == stats["applied"], f"lost update: version {stats['version']} after {stats}"
    assert stats["max_applied_lag"] <= MAX_LAG, f"applied a gradient {stats['max_applied_lag']} versions stale"


def main_correct(workers: int = 2, steps: int = 2, clip: Clip = 1000) -> None:
    train(workers, steps, locked=True, call_back=False, clip=clip)


def main_bug_clip_bumps_version(workers: int = 2, steps: int = 2, clip: Clip = 1000) -> None:
    train(workers, steps, locked=True, call_back=False, clip=clip, bump_on_clip=True)


def main_bug_lost_update(workers: int = 2, steps: int = 2) -> None:
    train(workers, steps, locked=False, call_back=False)


def main_bug_actor_deadlock(workers: int = 3, steps: int = 2) -> None:
    train(workers, steps, locked=True, call_back=True)
