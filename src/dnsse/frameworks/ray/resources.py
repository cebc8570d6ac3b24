"""The controlled cluster's resources: what ``ray.init`` declares, what tasks and actors hold.

As in Ray, a task needs ``num_cpus`` (default 1), ``num_gpus`` and custom
``resources`` free to start, holds them while it runs, and gives its CPUs
back while it is blocked in ``ray.get`` or ``ray.wait`` (taking them again
afterwards, even past the limit, as Ray does). An actor needs one CPU free
to be created but holds none while it lives, unless it declares
``num_cpus``; declared CPUs, GPUs and custom resources are held for its life.

Only what ``ray.init(num_cpus=..., num_gpus=..., resources={...})`` declares
is limited: a program that does not declare its cluster runs as if it were
large enough, so a campaign does not depend on the machine it runs on. A
demand larger than the whole cluster can never start, as in Ray (which
warns and waits forever): a deadlock, whose report says so.

A bundle of a placement group is a ``Cluster`` of its own (``strict``: what
the bundle did not reserve is not there at all); the cluster keeps its
reserved bundles so that a holder's release reaches whichever pool it drew
from (see :mod:`.placement_groups`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def demand_of(options: dict[str, Any], default_cpus: float) -> dict[str, float]:
    """What ``options`` (of a task, an actor) ask for; zero amounts left out."""
    cpus = options.get("num_cpus")
    demand = {"CPU": default_cpus if cpus is None else float(cpus), "GPU": float(options.get("num_gpus") or 0)}
    for name, amount in (options.get("resources") or {}).items():
        demand[str(name)] = float(amount)
    return {name: amount for name, amount in demand.items() if amount > 0}


def render(amounts: dict[str, float]) -> str:
    return ", ".join(f"{amount:g} {name}" for name, amount in amounts.items()) or "nothing"


@dataclass
class _Holder:
    demand: dict[str, float]
    # Tasks give their resources back while blocked in ray.get / ray.wait.
    releases_when_blocked: bool
    holding: bool = True


@dataclass
class Cluster:
    total: dict[str, float] = field(default_factory=dict)
    _holders: dict[str, _Holder] = field(default_factory=dict)
    # A placement group's bundle: a resource it did not reserve is absent, not unlimited.
    strict: bool = False
    title: str = "the whole cluster"
    # Only the cluster's: its reserved bundles, so that give/blocked reach a holder in any of them.
    bundles: list[Cluster] = field(default_factory=list)

    def declare(self, num_cpus: Any = None, num_gpus: Any = None, resources: dict | None = None) -> None:
        """``ray.init``'s declaration of the cluster."""
        if num_cpus is not None:
            self.total["CPU"] = float(num_cpus)
        if num_gpus is not None:
            self.total["GPU"] = float(num_gpus)
        for name, amount in (resources or {}).items():
            self.total[str(name)] = float(amount)

    def used(self, name: str) -> float:
        return sum(h.demand.get(name, 0.0) for h in self._holders.values() if h.holding)

    def fits(self, demand: dict[str, float]) -> bool:
        if not self.total and not self.strict:
            return True  # an undeclared cluster: as large as anything asks
        return all(self.used(name) + amount <= self.total[name] if name in self.total else not self.strict
                   for name, amount in demand.items())

    def could_ever_fit(self, demand: dict[str, float]) -> bool:
        return all(amount <= self.total[name] if name in self.total else not self.strict
                   for name, amount in demand.items())

    def take(self, holder: str, demand: dict[str, float], releases_when_blocked: bool = False) -> None:
        if demand:
            self._holders[holder] = _Holder(demand, releases_when_blocked)

    def give(self, holder: str) -> None:
        for pool in (self, *self.bundles) if self.bundles else (self,):
            pool._holders.pop(holder, None)

    def blocked(self, holder: str) -> None:
        for pool in (self, *self.bundles) if self.bundles else (self,):
            entry = pool._holders.get(holder)
            if entry is not None and entry.releases_when_blocked:
                entry.holding = False

    def unblocked(self, holder: str) -> None:
        for pool in (self, *self.bundles) if self.bundles else (self,):
            entry = pool._holders.get(holder)
            if entry is not None:
                entry.holding = True

    def why_not(self, demand: dict[str, float]) -> str:
        """Why ``demand`` cannot start now, for deadlock reports."""
        for name, amount in demand.items():
            if amount > self.total.get(name, 0.0 if self.strict else amount):
                source = "" if self.strict else ", from ray.init"
                return (f"{render(demand)}, more than {self.title} has ({self.total.get(name, 0.0):g} {name}"
                        f"{source}): it can never start")
        holders = ", ".join(f"{label} ({render(h.demand)})" for label, h in self._holders.items() if h.holding)
        where = f" in {self.title} (it reserved" if self.strict else " (ray.init declared"
        return f"{render(demand)} to be free{where} {render(self.total)}; held by {holders or 'nobody'})"
