"""What the runs so far have shown, in the terms an advisor reasons in.

Both advisors read the same summary: the operations each agent performed and
where, the ordered pairs of dependent operations of different agents that were
observed (who touched a shared object first), the inputs and their ranges, and
the bugs already found. The summary is also what a hint is validated against:
an agent or a location that no run reached does not exist.
"""

from __future__ import annotations

import ast
import enum
import itertools
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from dnsse.advisor.actor_calls import call_of, calls_in, class_of
from dnsse.advisor.step import Step

if TYPE_CHECKING:
    from dnsse.advisor.divergence import Divergence
    from dnsse.engine.inputs import InputParameter


MAX_STEPS_PER_OBJECT = 16


@dataclass(frozen=True)
class InputSpec:
    """An explored input of the entry point, to describe it and to validate proposed values.

    ``domain`` is the input's :class:`~dnsse.engine.inputs.Domain`: a value is
    valid when the domain can produce it.
    """

    name: str
    type: Any
    default: object
    domain: Any

    @staticmethod
    def of(parameter: InputParameter) -> InputSpec:
        return InputSpec(parameter.name, parameter.type, parameter.default, parameter.domain)

    def validated(self, value: object) -> tuple[object] | None:
        """``(value,)`` in the input's own type when its domain holds it, else ``None``."""
        kind = self.type
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            if not isinstance(value, str) or value not in kind.__members__:
                return None
            value = kind[value]
        elif kind is bool and not isinstance(value, bool):
            return None
        elif kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            return None
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None
            value = float(value)
        elif kind is str and not isinstance(value, str):
            return None
        if self.domain is None or self.domain.index_of(value) is None:
            return None
        return (value,)

    def indices(self, value: object) -> list[int]:
        """The input choices that make ``value`` (it was validated)."""
        indices = self.domain.index_of(value)
        assert indices is not None
        return indices

    def describe(self) -> str:
        where = self.domain.describe() if self.domain is not None else "fixed at its default"
        return f"{self.name} = {self.default!r} ({where})"


@dataclass(frozen=True)
class ObservedOrder:
    """``first`` touched an object before ``second`` did, in some execution."""

    first: Step
    second: Step
    obj: str

    def __post_init__(self) -> None:
        # Hashed once: races() looks every order and its reverse up after every execution.
        object.__setattr__(self, "_hash", hash((self.first, self.second, self.obj)))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined]


@dataclass
class RunSummary:
    inputs: dict[str, InputSpec] = field(default_factory=dict)
    specs: list[str] = field(default_factory=list)
    executions: int = 0
    # agent -> operation kind -> (location -> times seen), over all executions
    operations: dict[str, dict[str, Counter]] = field(default_factory=dict)
    orders: Counter = field(default_factory=Counter)  # ObservedOrder -> executions that showed it
    # object -> agent -> the distinct steps of that agent on it, in program order
    accesses: dict[str, dict[str, list[Step]]] = field(default_factory=dict)
    bugs: list[str] = field(default_factory=list)
    # The steps of the latest execution, in the order they ran: each agent's program order.
    last_steps: list[Step] = field(default_factory=list)
    uncovered: list[str] = field(default_factory=list)
    # file name -> the lines holding a statement, of the target's source (see code_lines)
    code: dict[str, set[int]] = field(default_factory=dict)
    # Actors the runtime asked whether to crash (they declare restarts), and the methods they ran.
    restartable: dict[str, set[str]] = field(default_factory=dict)
    # (actor, method, n): the n-th call of that method, in some run, changed nothing it persisted.
    unpersisted: set[tuple[str, str, int]] = field(default_factory=set)
    # class name -> its methods that change an attribute of self (see actor_calls.state_changing_methods)
    state_changes: dict[str, set[str]] = field(default_factory=dict)
    # Inputs solved to make two agents decide one comparison apart (see dnsse.advisor.divergence).
    divergences: list[Divergence] = field(default_factory=list)
    # What races() already knows: of which counter, how many of its orders, which were seen both ways.
    _reversals_of: Counter | None = field(default=None, repr=False, compare=False)
    _reversals_checked: int = field(default=0, repr=False, compare=False)
    _reversals: set[ObservedOrder] = field(default_factory=set, repr=False, compare=False)

    @property
    def agents(self) -> list[str]:
        return list(self.operations)

    def kinds_of(self, agent: str) -> set[str]:
        return set(self.operations.get(agent, {}))

    def all_kinds(self) -> set[str]:
        return {kind for by_kind in self.operations.values() for kind in by_kind}

    def is_code_line(self, location: str) -> bool:
        """``location`` (``file.py:LINE``) is a statement of the target's source."""
        name, _, line = location.rpartition(":")
        return line.isdigit() and int(line) in self.code.get(name, set())

    def methods_of(self, actor: str) -> set[str]:
        return self.restartable.get(actor, set())

    def locations_of(self, agent: str) -> set[str]:
        return {location for by_location in self.operations.get(agent, {}).values() for location in by_location}

    def observe(self, steps: Sequence[Step], bug: str | None = None, fault_askers: Iterable[str] = ()) -> None:
        """Add one execution's steps (in the order they ran), its bug, if any, and who was asked to crash."""
        self.executions += 1
        self.last_steps = list(steps)
        # In the order they were asked: the summary (and a prompt, and the ranking of
        # hints) must not depend on how a set of names happens to iterate.
        self._observe_actor_calls(steps, list(dict.fromkeys(fault_askers)))
        for step in steps:
            by_kind = self.operations.setdefault(step.agent, {})
            by_kind.setdefault(step.kind, Counter())[step.location] += 1
            for name, _ in step.objects:
                steps_on = self.accesses.setdefault(name, {}).setdefault(step.agent, [])
                if step not in steps_on and len(steps_on) < MAX_STEPS_PER_OBJECT:
                    steps_on.append(step)
        # Each order once per execution, in the order it first showed: ties of the
        # ranking in races() fall to first sight. A set would order them by hash,
        # and hash(None) (a step with no location) differs from process to process.
        self.orders.update(list(dict.fromkeys(_cross_agent_orders(steps))))
        if bug is not None and bug not in self.bugs:
            self.bugs.append(bug)

    def _observe_actor_calls(self, steps: Sequence[Step], fault_askers: list[str]) -> None:
        for agent in fault_askers:
            call = call_of(agent)
            if call is not None:
                self.restartable.setdefault(call[0], set()).add(call[1])
        for call in calls_in(steps):
            if call.actor in self.restartable and not call.persisted:
                if call.method in self.state_changes.get(class_of(call.actor), set()):
                    self.unpersisted.add((call.actor, call.method, call.nth))

    def races(self) -> list[ObservedOrder]:
        """Observed orders whose reverse was never observed: the orders worth reversing first."""
        reversed_orders = self._reversed_orders()
        return [order for order, _ in self.orders.most_common() if order not in reversed_orders]

    def _reversed_orders(self) -> set[ObservedOrder]:
        """The orders seen both ways round, brought up to date with the orders added since the last call.

        Orders are only ever added (a restored summary gets a new counter), and
        an order seen both ways stays so: only the new ones need a look.
        """
        if self._reversals_of is not self.orders:
            self._reversals_of, self._reversals_checked, self._reversals = self.orders, 0, set()
        for order in itertools.islice(self.orders, self._reversals_checked, None):
            reverse = ObservedOrder(order.second, order.first, order.obj)
            if reverse in self.orders:
                self._reversals.update((order, reverse))
        self._reversals_checked = len(self.orders)
        return self._reversals

    def render(self, max_lines: int = 120) -> str:
        """The summary as text for a prompt, with at most ``max_lines`` lines of observations."""
        lines = [f"executions so far: {self.executions}"]
        if self.inputs:
            lines.append("inputs: " + "; ".join(spec.describe() for spec in self.inputs.values()))
        if self.specs:
            lines.append("specifications: " + "; ".join(self.specs))
        lines.append("operations per agent (kind at location x times):")
        for agent, by_kind in self.operations.items():
            lines.append(f"  {agent}:")
            for kind, by_location in by_kind.items():
                for location, times in by_location.most_common():
                    lines.append(f"    {kind} at {location or '?'} x{times}")
        for actor, methods in self.restartable.items():
            lines.append(f"actor {actor} may crash (it declares restarts); its methods: {', '.join(sorted(methods))}")
        lines.append("observed orders of dependent operations (first -> second, on object):")
        for order in self.races()[:40]:
            lines.append(
                f"  {_short(order.first)} -> {_short(order.second)} on {order.obj}"
                f" (never the other way round)"
            )
        if self.uncovered:
            lines.append("branches never taken: " + ", ".join(self.uncovered[:30]))
        lines.append("bugs already found: " + ("; ".join(self.bugs) if self.bugs else "none"))
        return "\n".join(lines[:max_lines])


def code_lines(path: Path) -> dict[str, set[int]]:
    """The lines of ``path`` that hold a statement, under the name locations give the file."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return {}
    return {path.name: {node.lineno for node in ast.walk(tree) if isinstance(node, ast.stmt)}}


def _short(step: Step) -> str:
    return f"{step.agent}'s {step.kind} at {step.location or '?'}"


def _cross_agent_orders(steps: Sequence[Step]) -> Iterable[ObservedOrder]:
    """The last conflicting access by another agent before each step, per object."""
    last_access: dict[str, list[Step]] = {}
    for step in steps:
        for name, _ in step.objects:
            for earlier in reversed(last_access.get(name, [])):
                if earlier.agent != step.agent and earlier.conflicts_with(step):
                    yield ObservedOrder(earlier, step, name)
                    break
            history = last_access.setdefault(name, [])
            history.append(step)
            if len(history) > 8:
                del history[0]
