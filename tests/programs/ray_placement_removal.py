"""Removing a placement group kills what runs in it; child tasks may be captured into it (Ray's docs).

The correct ones also run under real Ray (tests/test_ray_real.py), on one Ray instance:
hence ignore_reinit_error.
"""

import asyncio

import ray
from ray.util.placement_group import get_current_placement_group, placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy


@ray.remote(num_cpus=1)
def square(x):
    return x * x


@ray.remote(num_cpus=1)
class Counter:
    def __init__(self):
        self.count = 0

    def add(self, n):
        self.count += n
        return self.count


@ray.remote
class Signal:
    """The task tells the driver it has started, then waits to be released."""

    def __init__(self):
        self.arrived = asyncio.Event()
        self.released = asyncio.Event()

    async def arrive(self):
        self.arrived.set()

    async def wait_arrival(self):
        await self.arrived.wait()

    async def wait_release(self):
        await self.released.wait()


@ray.remote(num_cpus=1)
def held(signal):
    ray.get(signal.arrive.remote())
    ray.get(signal.wait_release.remote())
    return "done"


def _group(bundles=1):
    pg = placement_group([{"CPU": 1}] * bundles)
    ray.get(pg.ready())
    return pg


def _in(pg, index=-1, capture=None):
    return PlacementGroupSchedulingStrategy(placement_group=pg, placement_group_bundle_index=index,
                                            placement_group_capture_child_tasks=capture)


def result_read_before_removal():
    ray.init(num_cpus=2, ignore_reinit_error=True)
    pg = _group()
    ref = square.options(scheduling_strategy=_in(pg), max_retries=0).remote(3)
    assert ray.get(ref) == 9
    remove_placement_group(pg)


def removed_before_the_result_is_read():
    """The bug: the group is removed while its task may not have run yet."""
    ray.init(num_cpus=2, ignore_reinit_error=True)
    pg = _group()
    ref = square.options(scheduling_strategy=_in(pg), max_retries=0).remote(3)
    remove_placement_group(pg)
    assert ray.get(ref) == 9


def removal_kills_actors():
    """A live actor dies with its group; one waiting for its bundle is never created."""
    ray.init(num_cpus=4, ignore_reinit_error=True)
    pg = _group()
    alive = Counter.options(scheduling_strategy=_in(pg, 0)).remote()
    assert ray.get(alive.add.remote(1)) == 1
    waiting = Counter.options(scheduling_strategy=_in(pg, 0)).remote()
    remove_placement_group(pg)
    try:
        ray.get(alive.add.remote(1))
        raise AssertionError("the actor outlived its placement group")
    except ray.exceptions.ActorDiedError:
        pass
    try:
        ray.get(waiting.add.remote(1))
        raise AssertionError("the actor was created in a removed placement group")
    except ray.exceptions.ActorUnschedulableError:
        pass


def removal_kills_a_running_task():
    ray.init(num_cpus=2, ignore_reinit_error=True)
    pg = _group()
    signal = Signal.remote()
    ref = held.options(scheduling_strategy=_in(pg), max_retries=0).remote(signal)
    ray.get(signal.wait_arrival.remote())
    remove_placement_group(pg)
    try:
        ray.get(ref)
        raise AssertionError("the task survived its placement group")
    except ray.exceptions.WorkerCrashedError:
        pass


def removal_while_a_retried_task_runs():
    """With Ray's default max_retries the killed task is retried in the removed group: it never finishes."""
    ray.init(num_cpus=2, ignore_reinit_error=True)
    pg = _group()
    signal = Signal.remote()
    ref = held.options(scheduling_strategy=_in(pg)).remote(signal)
    ray.get(signal.wait_arrival.remote())
    remove_placement_group(pg)
    print(ray.get(ref))


@ray.remote(num_cpus=1)
def where():
    return get_current_placement_group()


@ray.remote(num_cpus=1)
def parent_where():
    return get_current_placement_group(), ray.get(where.remote())


@ray.remote(num_cpus=1)
def opted_out():
    return ray.get(where.options(scheduling_strategy="DEFAULT").remote())


def capture_child_tasks():
    """As Ray 2.60 answers: the parent is in the group; its child only when the group captures child tasks."""
    ray.init(num_cpus=4, ignore_reinit_error=True)
    pg = _group(2)
    assert get_current_placement_group() is None
    assert ray.get(parent_where.options(scheduling_strategy=_in(pg)).remote()) == (pg, None)
    assert ray.get(parent_where.options(scheduling_strategy=_in(pg, capture=True)).remote()) == (pg, pg)
    assert ray.get(opted_out.options(scheduling_strategy=_in(pg, capture=True)).remote()) is None
    remove_placement_group(pg)


@ray.remote(num_cpus=1)
def start_workers(count):
    workers = [Counter.remote() for _ in range(count)]
    return ray.get([w.add.remote(1) for w in workers])


def _start_three_workers(capture):
    ray.init(num_cpus=8, ignore_reinit_error=True)
    pg = _group(2)
    assert ray.get(start_workers.options(scheduling_strategy=_in(pg, capture=capture)).remote(3)) == [1, 1, 1]


def captured_actors_outgrow_their_group():
    """Actors started by a captured task hold the group's CPUs for life: the third never fits in two bundles."""
    _start_three_workers(capture=True)


def uncaptured_actors_fit_the_cluster():
    _start_three_workers(capture=False)
