"""Placement groups as Ray's documentation uses them: reserve bundles, place tasks and actors in them."""

import ray
from ray.util.placement_group import get_placement_group, placement_group, remove_placement_group
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


def reserve_then_run() -> None:
    """The docs' example: reserve two 1-CPU bundles, run a task in one and an actor in the other."""
    ray.init(num_cpus=2)
    pg = placement_group([{"CPU": 1}, {"CPU": 1}], strategy="PACK", name="pair")
    ray.get(pg.ready())
    assert pg.wait(timeout_seconds=10)
    assert get_placement_group("pair") is pg and pg.bundle_count == 2
    counter = Counter.options(
        scheduling_strategy=PlacementGroupSchedulingStrategy(placement_group=pg, placement_group_bundle_index=0)
    ).remote()
    refs = [square.options(scheduling_strategy=PlacementGroupSchedulingStrategy(
        placement_group=pg, placement_group_bundle_index=1)).remote(i) for i in range(3)]
    assert ray.get(refs) == [0, 1, 4]
    assert ray.get(counter.add.remote(5)) == 5
    ray.kill(counter)
    remove_placement_group(pg)
    # The reservation is back in the pool: a plain 2-CPU task fits again.
    assert ray.get(square.options(num_cpus=2).remote(3)) == 9
    ray.shutdown()


def pending_until_released() -> None:
    """A second group waits for the first one's CPUs; pg.wait times out while it is pending."""
    ray.init(num_cpus=2)
    first = placement_group([{"CPU": 2}])
    ray.get(first.ready())
    second = placement_group([{"CPU": 1}], strategy="STRICT_PACK")
    assert not second.wait(timeout_seconds=1)
    remove_placement_group(first)
    ray.get(second.ready())
    strategy = PlacementGroupSchedulingStrategy(placement_group=second)
    assert ray.get(square.options(scheduling_strategy=strategy).remote(4)) == 16
    ray.shutdown()


def too_big_for_the_cluster() -> None:
    """Asks for more CPUs than ray.init declared and waits for it: the group is never reserved."""
    ray.init(num_cpus=2)
    pg = placement_group([{"CPU": 2}, {"CPU": 2}], name="big")
    ray.get(pg.ready())
    ray.shutdown()


@ray.remote(num_cpus=1)
def gather(pg):
    # A nested task placed in the same one-CPU bundle as its parent, which holds it while it waits.
    strategy = PlacementGroupSchedulingStrategy(placement_group=pg, placement_group_bundle_index=0)
    return ray.get(square.options(scheduling_strategy=strategy, num_cpus=0.5).remote(2))


def child_waits_for_parents_bundle() -> None:
    """The parent gives its CPU back while blocked in ray.get, so the child fits: no deadlock."""
    ray.init(num_cpus=2)
    pg = placement_group([{"CPU": 1}])
    ray.get(pg.ready())
    strategy = PlacementGroupSchedulingStrategy(placement_group=pg, placement_group_bundle_index=0)
    assert ray.get(gather.options(scheduling_strategy=strategy).remote(pg)) == 4
    ray.shutdown()


def actors_oversubscribe_their_bundle() -> None:
    """Two 1-CPU actors in one 1-CPU bundle: the second is never created, and the driver waits on it."""
    ray.init(num_cpus=4)
    pg = placement_group([{"CPU": 1}, {"CPU": 1}])
    ray.get(pg.ready())
    strategy = PlacementGroupSchedulingStrategy(placement_group=pg, placement_group_bundle_index=0)
    counters = [Counter.options(scheduling_strategy=strategy).remote() for _ in range(2)]
    print(ray.get([c.add.remote(1) for c in counters]))
    ray.shutdown()


def bundle_too_small() -> None:
    ray.init(num_cpus=4)
    pg = placement_group([{"CPU": 1}])
    strategy = PlacementGroupSchedulingStrategy(placement_group=pg, placement_group_bundle_index=0)
    square.options(scheduling_strategy=strategy, num_cpus=2).remote(1)
