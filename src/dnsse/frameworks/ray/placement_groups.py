"""Placement groups: bundles of resources reserved from the cluster, and the work placed in them.

``ray.util.placement_group(bundles, strategy, name)`` asks for every bundle
at once; a reservation agent of the runtime waits until they all fit in the
cluster's pool (the scheduler chooses when, among the other work), takes
them and fills ``pg.ready()``. Until then the group is pending: a program
whose group can never fit and that does ``ray.get(pg.ready())`` deadlocks,
and the report names the group. The controlled cluster is one node, as
``ray.init()`` makes it, so ``STRICT_SPREAD`` with more than one bundle never
fits (as on a one-node Ray cluster).

A task or actor with ``scheduling_strategy=PlacementGroupSchedulingStrategy(
placement_group=pg, placement_group_bundle_index=i)`` (or the older
``placement_group=`` options) draws from bundle ``i`` (any bundle for -1)
instead of the pool: it waits while the group is pending or the bundle is
busy, and a demand that no chosen bundle could ever hold is refused at
submission, as Ray refuses it.

``placement_group_capture_child_tasks=True`` places the tasks and actors
that such work starts (without a strategy of their own) in the same group,
any bundle, and theirs too; ``ray.util.get_current_placement_group()`` is
the group the calling task or actor runs in (None in the driver).

``remove_placement_group`` gives the reservation back and, as Ray does
(measured with Ray 2.60), kills what runs in the group: a task not started
fails with ``TaskPlacementGroupRemoved``; a running one loses its worker at
its next Ray call (``WorkerCrashedError`` with ``max_retries=0``; otherwise
the retry waits for the removed group forever, as Ray's does); an actor
dies (``ActorDiedError``), or never gets created
(``ActorUnschedulableError``).
"""

from __future__ import annotations

from typing import Any, Callable

from dnsse.engine.agent import ThreadAgent, Wait
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.ray.refs import ObjectRef
from dnsse.frameworks.ray.resources import Cluster, render
from dnsse.frameworks.ray.runtime import RayRuntime, Worker, controlled
from dnsse.frameworks.ray.scheduling_strategies import PlacementGroupSchedulingStrategy
from dnsse.frameworks.ray.serialization import passed_by_name
from dnsse.frameworks.threads.primitive import block_until

STRATEGIES = ("PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD")


# Shipped as its id, as Ray pickles a placement group.
@passed_by_name
class PlacementGroup:
    """``ray.util.placement_group(...)``'s handle: ``ready()``, ``wait()``, ``bundle_specs``."""

    def __init__(self, runtime: RayRuntime, number: int, bundles: list[dict[str, float]], strategy: str,
                 name: str) -> None:
        self.id = number
        self.name = name
        self.strategy = strategy
        self.label = f"placement_group#{number}" + (f" {name!r}" if name else "")
        self.bundle_specs = [dict(bundle) for bundle in bundles]
        self.bundles = [Cluster(total=dict(bundle), strict=True, title=f"bundle {index} of {self.label}")
                        for index, bundle in enumerate(bundles)]
        self.reserved = self.removed = False
        # What each task or actor placed in the group does when the group is removed.
        self.on_removal: list[Callable[[], None]] = []
        self._cluster = runtime.cluster
        self._ready = ObjectRef(runtime.next_ref_number(), self.label)
        self._start_reservation(runtime)

    @property
    def bundle_count(self) -> int:
        return len(self.bundles)

    def _need(self) -> dict[str, float]:
        need: dict[str, float] = {}
        for bundle in self.bundle_specs:
            for resource, amount in bundle.items():
                need[resource] = need.get(resource, 0.0) + amount
        return {resource: amount for resource, amount in need.items() if amount > 0}

    def _start_reservation(self, runtime: RayRuntime) -> None:
        cluster, need = runtime.cluster, self._need()
        # Named like work (placement_group#N) so that a deadlock report lists it, with why it waits.
        label = f"placement_group#{self.id}"
        agent = ThreadAgent(runtime.execution, label, lambda: self._reserve(runtime, agent), daemon=True)
        agent.handle = Worker(caller=label, label=label)
        agent.pending = Operation("placement_group.reserve", ((self.object_name, Access.WRITE),), self.label)
        never = self.strategy == "STRICT_SPREAD" and len(self.bundles) > 1

        def why_waiting() -> str:
            if never:
                return f"{self.label}: STRICT_SPREAD needs a node per bundle, and the controlled cluster is one node"
            return f"{self.label}: {cluster.why_not(need)}"

        agent.waiting = Wait(lambda: self.removed or (not never and cluster.fits(need)), why_waiting)

    def _reserve(self, runtime: RayRuntime, agent: ThreadAgent) -> None:
        if self.removed:
            return
        runtime.cluster.take(self.label, self._need())
        runtime.cluster.bundles.extend(self.bundles)
        self.reserved = True
        self._ready.fill(self)
        runtime.execution.emit(agent, "placement_group.ready", {"placement_group": self.label})

    @property
    def object_name(self) -> str:
        return f"placement_group:{self.id}"

    def ready(self) -> ObjectRef:
        """An ObjectRef that resolves (to this group) once every bundle is reserved."""
        return self._ready

    def wait(self, timeout_seconds: float = 30) -> bool:
        """Whether the group is reserved within ``timeout_seconds`` (virtual time)."""
        agent, runtime = controlled("PlacementGroup.wait")
        operation = Operation("placement_group.wait", ((self.object_name, Access.READ),), self.label)
        if timeout_seconds is not None and timeout_seconds <= 0:
            runtime.execution.yield_point(agent, operation)
            return self.reserved
        return block_until(agent, operation, lambda: self.reserved, lambda: f"{self.label} to be reserved",
                           timeout_seconds)

    def remove(self) -> None:
        if self.removed:
            return
        self.removed = True
        if self.reserved:
            self.reserved = False
            self._cluster.give(self.label)
            self._cluster.bundles[:] = [b for b in self._cluster.bundles if all(b is not o for o in self.bundles)]
        for kill in self.on_removal:
            kill()

    def __repr__(self) -> str:
        return f"PlacementGroup(id={self.id}, bundles={self.bundle_specs}, strategy={self.strategy})"

    def __copy__(self) -> PlacementGroup:
        return self


class BundlePlacement:
    """Where work placed in a group draws its resources: one bundle, or any (index -1)."""

    def __init__(self, group: PlacementGroup, index: int, what: str, demand: dict[str, float],
                 capture_child_tasks: bool = False) -> None:
        if not -1 <= index < group.bundle_count:
            raise ValueError(f"placement_group_bundle_index must be -1 or between 0 and "
                             f"{group.bundle_count - 1} for {group.label}, got {index} ({what})")
        self.group = group
        self.capture_child_tasks = capture_child_tasks
        self.candidates = group.bundles if index == -1 else [group.bundles[index]]
        if not any(bundle.could_ever_fit(demand) for bundle in self.candidates):
            raise ValueError(
                f"Cannot schedule {what} with the placement group because the resource request "
                f"{render(demand)} cannot fit into any bundles for the placement group, {group.bundle_specs}."
            )
        self.drawn_from: Cluster | None = None

    def fits(self, demand: dict[str, float]) -> bool:
        return self.group.reserved and any(bundle.fits(demand) for bundle in self.candidates)

    def take(self, holder: str, demand: dict[str, float], releases_when_blocked: bool = False) -> None:
        self.drawn_from = next((b for b in self.candidates if b.fits(demand)), self.candidates[0])
        self.drawn_from.take(holder, demand, releases_when_blocked)

    def give(self, holder: str) -> None:
        if self.drawn_from is not None:
            self.drawn_from.give(holder)
            self.drawn_from = None

    def why_not(self, demand: dict[str, float]) -> str:
        if self.group.removed:
            return f"{self.group.label}, which was removed"
        if not self.group.reserved:
            return f"{self.group.label} to be reserved"
        return " or ".join(bundle.why_not(demand) for bundle in self.candidates)


def placement_of(runtime: RayRuntime, options: dict[str, Any], demand: dict[str, float],
                 what: str, parent: Worker) -> Cluster | BundlePlacement:
    """The pool that work with ``options``, started by ``parent``, draws from: the cluster's, or a bundle.

    As Ray decides it: a ``PlacementGroupSchedulingStrategy`` (or the older
    ``placement_group=`` options) names the group; without one, work started
    by a task whose group captures child tasks goes to that group.
    """
    strategy = options.get("scheduling_strategy")
    group = options.get("placement_group", "default")
    index = options.get("placement_group_bundle_index", -1)
    capture = options.get("placement_group_capture_child_tasks")
    if isinstance(strategy, PlacementGroupSchedulingStrategy):
        group, index = strategy.placement_group, strategy.placement_group_bundle_index
        capture = strategy.placement_group_capture_child_tasks
    elif strategy is not None:
        group = None  # "DEFAULT", "SPREAD": not in a group, whatever the parent's
    parents_group, parent_captures = parent.placement()
    if capture is None:
        capture = parent_captures
    if group == "default":
        group = parents_group if capture else None
    if group is None:
        return runtime.cluster
    if not isinstance(group, PlacementGroup):
        raise TypeError(f"placement_group must be a PlacementGroup from ray.util.placement_group, got {group!r}")
    return BundlePlacement(group, -1 if index is None else int(index), what, demand, bool(capture))


def placement_group(bundles: list[dict[str, float]], strategy: str = "PACK", name: str = "",
                    lifetime: str | None = None, **kwargs: Any) -> PlacementGroup:
    """``ray.util.placement_group``: ask for ``bundles``; the handle's ``ready()`` says when they are reserved."""
    agent, runtime = controlled("ray.util.placement_group")
    if not isinstance(bundles, (list, tuple)) or not bundles:
        raise ValueError("The placement group `bundles` argument cannot contain an empty list")
    for bundle in bundles:
        if not isinstance(bundle, dict) or not bundle or not all(
                isinstance(amount, (int, float)) and not isinstance(amount, bool) and amount >= 0
                for amount in bundle.values()):
            raise ValueError(f"Bundles must be non-empty dicts of resource name to a non-negative amount, "
                             f"got {bundle!r}")
        if all(amount == 0 for amount in bundle.values()):
            raise ValueError(f"Bundles cannot be an empty dictionary or resources with only 0 values. "
                             f"Bundles: {list(bundles)}")
    if strategy not in STRATEGIES:
        raise ValueError(f"Invalid placement group strategy {strategy}. Supported strategies are: "
                         f"{', '.join(STRATEGIES)}.")
    if name and name in runtime.placement_groups and not runtime.placement_groups[name].removed:
        raise ValueError(f"Failed to create placement group '{name}' because name '{name}' already exists.")
    runtime.checkpoint(agent)
    number = len(runtime.placement_groups_made) + 1
    runtime.execution.yield_point(agent, Operation("placement_group.create", (("placement_groups", Access.WRITE),),
                                                   f"placement_group#{number}"))
    group = PlacementGroup(runtime, number, [{str(k): float(v) for k, v in b.items()} for b in bundles],
                           strategy, str(name or ""))
    runtime.placement_groups_made.append(group)
    if name:
        runtime.placement_groups[str(name)] = group
    runtime.execution.emit(agent, "placement_group.create", {"placement_group": group.label})
    return group


def remove_placement_group(group: PlacementGroup) -> None:
    """``ray.util.remove_placement_group``: give the bundles back, killing the tasks and actors placed there."""
    if not isinstance(group, PlacementGroup):
        raise TypeError(f"remove_placement_group expects a PlacementGroup, got {group!r}")
    agent, runtime = controlled("ray.util.remove_placement_group")
    runtime.execution.yield_point(agent, Operation("placement_group.remove", ((group.object_name, Access.WRITE),),
                                                   group.label))
    group.remove()
    runtime.execution.emit(agent, "placement_group.remove", {"placement_group": group.label})


def get_placement_group(placement_group_name: str) -> PlacementGroup:
    """``ray.util.get_placement_group``: the live group created with that name."""
    agent, runtime = controlled("ray.util.get_placement_group")
    runtime.execution.yield_point(agent, Operation("placement_group.get", (("placement_groups", Access.READ),),
                                                   placement_group_name))
    group = runtime.placement_groups.get(placement_group_name)
    if group is None or group.removed:
        raise ValueError(f"Failed to look up placement group with name: {placement_group_name}")
    return group


def get_current_placement_group() -> PlacementGroup | None:
    """``ray.util.get_current_placement_group``: the group the calling task or actor runs in; None in the driver."""
    agent, runtime = controlled("ray.util.get_current_placement_group")
    group, _ = runtime.worker_of(agent).placement()
    return group
