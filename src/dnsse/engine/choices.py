"""The single choice sequence of an execution.

Every source of non-determinism asks a :class:`Chooser`. An execution is a pure
function of (target, choices): replay feeds a recorded sequence back, a
strategy is a policy that makes choices, mutation edits a sequence and
minimization shrinks one. Only real choices (two or more options) are
recorded, so traces stay short.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import CodeType
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from dnsse.engine.location import source_line_at

if TYPE_CHECKING:
    from dnsse.engine.operation import Operation


class ChoiceKind:
    """Names of choice kinds, as they appear in traces."""

    AGENT = "agent"  # which runnable agent takes the next step
    MATCH = "match"  # which pending message an any-source receive matches
    SEED = "seed"  # the seed of the program's random number generators
    INPUT = "input"  # the value an explored input takes
    FAULT = "fault"  # whether a fault is injected here
    WORKER = "worker"  # which idle worker process runs a Ray task


# Not frozen, though never changed: a frozen dataclass's constructor sets each field through
# object.__setattr__, four times slower, and one is made at every scheduling point.
@dataclass(slots=True, unsafe_hash=True)
class Chosen:
    """What a choice chose: which agent, doing what, where in the program.

    For a scheduling choice, the agent that ran and the operation it was
    stopped at; for a value choice, the agent that asked. ``where`` is
    ``file.py:LINE`` relative to the target's directory, so a trace checks the
    same wherever it is replayed from.
    """

    agent: str
    operation: str
    where: str = ""

    def describe(self) -> str:
        at = f" at {self.where}" if self.where else ""
        return f"{self.agent}'s {self.operation}{at}"

    def to_json(self) -> dict:
        return {"agent": self.agent, "operation": self.operation, "where": self.where}

    @staticmethod
    def from_json(raw: object) -> Chosen:
        if not isinstance(raw, dict) or not all(isinstance(raw.get(key, ""), str) for key in ("agent", "operation", "where")):
            raise ValueError(f"what a choice chose must be {{agent, operation, where}} strings, got {raw!r}")
        return Chosen(raw.get("agent", ""), raw.get("operation", ""), raw.get("where", ""))


# Not frozen, though never changed: a frozen dataclass's constructor sets each field through
# object.__setattr__, four times slower, and one is made at every scheduling point.
@dataclass(slots=True, unsafe_hash=True)
class Choice:
    kind: str
    options: int
    index: int
    # What was chosen; None in traces written before it was recorded, and in
    # answers that minimization plans without a run.
    chosen: Chosen | None = field(default=None, compare=False)

    def to_json(self) -> list:
        if self.chosen is None:
            return [self.kind, self.options, self.index]
        return [self.kind, self.options, self.index, self.chosen.to_json()]

    @staticmethod
    def from_json(raw: object) -> Choice:
        if (
            not isinstance(raw, list)
            or len(raw) not in (3, 4)
            or not isinstance(raw[0], str)
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in raw[1:3])
            or not 0 <= raw[2] < raw[1]
        ):
            raise ValueError(
                f"a choice must be [kind, options, index] or [kind, options, index, chosen] "
                f"with 0 <= index < options, got {raw!r}"
            )
        return Choice(raw[0], raw[1], raw[2], Chosen.from_json(raw[3]) if len(raw) == 4 else None)


class Chooser(Protocol):
    """The two questions the engine asks: which agent next, and which value."""

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        """Return the index in ``runnable`` of the agent that takes the next step.

        ``runnable`` lists the agents that can go on (ids ascending), then
        those whose timed wait may expire instead (ids ascending): choosing
        one of those makes its wait time out. ``current`` is the agent that
        was running, when it can go on.
        """
        ...

    def next_value(self, kind: str, options: int) -> int:
        """Return a value in ``range(options)`` for a choice of ``kind``.

        A chooser whose ``wants_asker`` is true gets a third argument,
        ``asker()``: who asks, and where (a fault aimed at one actor's worker).
        """
        ...


class OperationChooser(Chooser, Protocol):
    """A chooser that sees what each runnable agent is about to do (POS, DPOR).

    The engine asks a chooser whose ``wants_operations`` is true
    ``next_agent_seeing`` instead of ``next_agent``. ``operations[i]`` is the
    pending operation of ``runnable[i]``; ``history`` is the execution's list of
    (agent id, operation) of every step so far, including the steps where only
    one agent could run, which are not choices. A chooser whose
    ``wants_offered`` is also true gets a sixth argument, ``offered(i)``: what
    option ``i`` is as people name it (agent, operation, line), for choosers
    that match options against names (an advisor's hints).
    """

    wants_operations: bool

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
    ) -> int: ...


class TraceDivergence(Exception):
    """The program asked for choices that the recorded sequence cannot answer.

    Raised when a program changed since its trace was recorded, or when a
    program is not deterministic under control (it reads the clock, for example).
    """


class ChoiceCheck(Protocol):
    """What a :class:`RecordingChooser` asks of whoever checks its choices as they are made.

    The check (:class:`~dnsse.engine.determinism.DeterminismCheck`) is built
    on choices, so the recorder knows it only by these two questions.
    """

    def before(self, position: int, kind: str, options: int, offered: Callable[[], list[Chosen]]) -> None:
        """Choice number ``position`` is about to be made among ``options``; raise if a followed trace differs."""

    def after(self, position: int, made: Choice) -> None:
        """Choice number ``position`` was ``made``; raise if a followed trace recorded another."""


class RecordingChooser:
    """Wraps a chooser and records every real choice it makes, with what it chose.

    ``check`` (a :class:`ChoiceCheck`) compares each choice with the one a
    followed trace recorded. ``offered(i)`` says
    what option ``i`` is (the runnable agent ``runnable[i]``, or who asks for
    a value); it is called only for the option taken, or for a message.

    The engine records the scheduling choices it asks ``inner`` itself, at
    every point, where nothing checks them (:meth:`fast_agent_choices`): as a
    tuple in ``made`` (see :func:`agent_choice`), made a :class:`Choice` only
    when ``choices`` is read, once the run is over. A point then makes no
    object but that tuple.
    """

    __slots__ = ("inner", "made", "check", "_plain")

    def __init__(self, inner: Chooser, check: ChoiceCheck | None = None) -> None:
        self.inner = inner
        # Every choice so far, in order: a Choice, or an agent choice's tuple not yet made one.
        self.made: list = []
        self.check = check
        # How many leading entries of ``made`` are Choices already.
        self._plain = 0

    @property
    def choices(self) -> list[Choice]:
        made = self.made
        if self._plain < len(made):
            for position in range(self._plain, len(made)):
                entry = made[position]
                if type(entry) is tuple:
                    made[position] = agent_choice(*entry)
            self._plain = len(made)
        return made

    def fast_agent_choices(self) -> bool:
        """Whether the engine may ask ``inner`` for scheduling choices itself and record them as tuples.

        Not while a trace is followed (each choice is checked as it is made),
        nor for a chooser that wants what each option is named (``wants_offered``).
        """
        return self.check is None and not getattr(self.inner, "wants_offered", False)

    def next_agent(
        self, runnable: Sequence[int], current: int | None, step: int, offered: Callable[[int], Chosen]
    ) -> int:
        self._before(ChoiceKind.AGENT, len(runnable), offered)
        index = self.inner.next_agent(runnable, current, step)
        return self._record(ChoiceKind.AGENT, len(runnable), index, offered)

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
        offered: Callable[[int], Chosen],
    ) -> int:
        self._before(ChoiceKind.AGENT, len(runnable), offered)
        if getattr(self.inner, "wants_offered", False):
            index = self.inner.next_agent_seeing(runnable, current, step, operations, history, offered)  # type: ignore[attr-defined]
        else:
            index = self.inner.next_agent_seeing(runnable, current, step, operations, history)  # type: ignore[attr-defined]
        return self._record(ChoiceKind.AGENT, len(runnable), index, offered)

    def next_value(self, kind: str, options: int, asker: Callable[[], Chosen]) -> int:
        self._before(kind, options, lambda i: asker())
        if getattr(self.inner, "wants_asker", False):
            index = self.inner.next_value(kind, options, asker)  # type: ignore[call-arg]
        else:
            index = self.inner.next_value(kind, options)
        if not 0 <= index < options:
            raise ValueError(f"chooser answered {index} for a {kind} choice among {options}")
        return self._record(kind, options, index, lambda i: asker())

    def _before(self, kind: str, options: int, offered: Callable[[int], Chosen]) -> None:
        if self.check is not None:
            count = options if kind == ChoiceKind.AGENT else 1
            self.check.before(len(self.made), kind, options, lambda: [offered(i) for i in range(count)])

    def _record(self, kind: str, options: int, index: int, offered: Callable[[int], Chosen]) -> int:
        choice = Choice(kind, options, index, offered(index))
        if self.check is not None:
            self.check.after(len(self.made), choice)
        self.made.append(choice)
        return index


def agent_choice(options: int, index: int, agent: str, operation: str, code: CodeType | None, lasti: int) -> Choice:
    """The scheduling choice that the engine recorded as ``(options, index, agent, operation, code, lasti)``.

    ``code`` and ``lasti`` are the code and the last instruction of the
    frame of the program where the chosen agent stood (``None``: no frame
    of the program), read at the choice: its line, ``where``, is looked up
    only now.
    """
    where = source_line_at(code, lasti) if code is not None else ""
    return Choice(ChoiceKind.AGENT, options, index, Chosen(agent, operation, where))


class ReplayChooser:
    """Answers from a recorded choice sequence; asking for anything else is a divergence."""

    __slots__ = ("recorded", "position")

    def __init__(self, recorded: Sequence[Choice]) -> None:
        self.recorded = recorded
        self.position = 0

    def _take(self, kind: str, options: int) -> int:
        if self.position >= len(self.recorded):
            raise TraceDivergence(
                f"the program asked for choice {self.position + 1} ({kind} among {options}) "
                f"but the trace holds only {len(self.recorded)} choices"
            )
        choice = self.recorded[self.position]
        if choice.kind != kind or choice.options != options:
            raise TraceDivergence(
                f"choice {self.position + 1}: the program asked for a {kind} choice among {options}, "
                f"the trace recorded a {choice.kind} choice among {choice.options}"
            )
        self.position += 1
        return choice.index

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        return self._take(ChoiceKind.AGENT, len(runnable))

    def next_value(self, kind: str, options: int) -> int:
        return self._take(kind, options)


class FirstChooser:
    """Always the first option; keeps the current agent running when it can."""

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        if current is not None and current in runnable:
            return runnable.index(current)
        return 0

    def next_value(self, kind: str, options: int) -> int:
        return 0
