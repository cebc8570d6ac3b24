"""Built-in properties: ``--spec builtin:NAME`` or ``builtin:NAME(key=value, ...)``.

- ``deadlock_free``: no run deadlocks. The engine checks this in every run
  and reports a ``deadlock`` bug naming who waits for what, which says more
  than a formula could; the built-in states the requirement in a spec file
  and in the trace, and adds no cost.
- ``terminates``: every run finishes. A run cut off by the step or time limit
  is the engine's ``timeout`` bug; on finite runs ``F end`` cannot be refuted
  by a prefix, so the limit is what decides, as for ``deadlock_free``.
- ``replicas_equal(after=EVENT, field=NAME[, key=NAME])``: replicas agree.
  Every agent (a rank, a worker) that emits ``EVENT`` is a replica; the
  ``field`` value of its n-th ``EVENT`` (or of its ``EVENT`` with a given
  ``key`` value, e.g. ``key=step``) must equal the value the first replica
  reported. Tensors compare with ``torch.equal``, other values with ``==``.
  A property over data that LTL cannot say: written by hand it needs one
  formula per rank pair and value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from dnsse.errors import BadInput
from dnsse.spec.automaton import EventLike
from dnsse.spec.monitor import Verdict
from dnsse.spec.parser import SpecSyntaxError, parse
from dnsse.spec.syntax import Atom, FieldValue

PREFIX = "builtin:"
NAMES = ("deadlock_free", "terminates", "replicas_equal")


@dataclass
class EngineChecked:
    """A built-in the engine decides in every run (``deadlock``, ``timeout`` bugs)."""

    text: str

    def checker(self) -> None:
        return None


@dataclass
class ReplicasEqual:
    text: str
    event: str
    field: str
    key: str | None = None

    def checker(self) -> ReplicasChecker:
        return ReplicasChecker(self)


@dataclass
class _Report:
    agent: str
    value: object
    position: int


@dataclass
class ReplicasChecker:
    spec: ReplicasEqual
    window_start: int = 0
    _first: dict[object, _Report] = field(default_factory=dict)
    _counts: dict[str, int] = field(default_factory=dict)
    _positions: int = 0
    _problem: str = ""

    def observe(self, event: EventLike) -> None:
        spec = self.spec
        if event.name != spec.event or self._problem:
            return
        agent = getattr(event, "agent", "-")
        if spec.key is None:
            count = self._counts[agent] = self._counts.get(agent, 0) + 1
            slot: object = count
            which = f"{_ordinal(count)} {spec.event}"
        else:
            slot = event.fields.get(spec.key)
            which = f"{spec.event} with {spec.key}={slot!r}"
        if spec.field not in event.fields:
            self._problem = f"the {which} of {agent} has no field {spec.field!r}; emit it with that field"
            self.window_start = self._positions
            return
        value = event.fields[spec.field]
        first = self._first.get(slot)
        if first is None:
            self._first[slot] = _Report(agent, value, self._positions)
        elif first.agent != agent and not _same(first.value, value):
            self._problem = (
                f"the {which} of {agent} has {spec.field}={_short(value)} "
                f"but that of {first.agent} has {spec.field}={_short(first.value)}"
            )
            self.window_start = first.position

    def end_position(self) -> Verdict:
        self._positions += 1
        return Verdict.VIOLATED if self._problem else Verdict.PENDING

    def holds_if_ended(self) -> bool:
        return True

    def explain(self, ended: bool) -> list[str]:
        return [self._problem]


def parse_builtin(text: str) -> EngineChecked | ReplicasEqual:
    """The built-in that ``text`` (``builtin:NAME(...)``) names; BadInput when it names none."""
    call = text.strip()[len(PREFIX) :]
    try:
        atom = parse(call)
    except SpecSyntaxError as error:
        raise SpecSyntaxError(text, text.index(call) + error.position, error.problem) from None
    if not isinstance(atom, Atom) or atom.name not in NAMES:
        raise BadInput(f"unknown built-in property {text!r}; the built-ins are {', '.join(PREFIX + n for n in NAMES)}")
    arguments = dict(atom.tests)
    if atom.name in ("deadlock_free", "terminates"):
        _expect(text, arguments, required=(), optional=())
        return EngineChecked(text)
    _expect(text, arguments, required=("after", "field"), optional=("key",))
    key = arguments.get("key")
    return ReplicasEqual(text, str(arguments["after"]), str(arguments["field"]), None if key is None else str(key))


def _expect(text: str, arguments: dict[str, FieldValue], required: tuple[str, ...], optional: tuple[str, ...]) -> None:
    missing = [name for name in required if name not in arguments]
    unknown = [name for name in arguments if name not in required + optional]
    if missing or unknown:
        accepted = ", ".join([f"{n}=..." for n in required] + [f"[{n}=...]" for n in optional]) or "no arguments"
        raise BadInput(f"the built-in property {text!r} takes {accepted}")


def _same(a: object, b: object) -> bool:
    if type(a).__module__.startswith("torch") or type(b).__module__.startswith("torch"):
        import torch

        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and torch.equal(a, b)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - values without a truth value (arrays): compare their text
        return repr(a) == repr(b)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
