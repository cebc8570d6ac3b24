"""How many events a second the LTL monitor sustains (dnsse.spec).

Feeds a synthetic trace, one event per position, to a monitor per formula and
prints a table of the best of ``--repeat`` runs (the machine's noise only
ever slows a run down). "monitor" is ``Monitor.step`` alone; "in a run" goes through
the observers an execution calls (an event observer per event, a step
observer per step), as ``dnsse check --spec`` does.

    python benchmarks/monitor_speed.py [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import random
import time

from dnsse.engine.execution import Event, Execution
from dnsse.spec.automaton import Automaton
from dnsse.spec.monitor import Monitor, Verdict
from dnsse.spec.sources import parse_property
from dnsse.spec.watch import SpecSuite

FORMULAS = [
    ("safety", "G !bad"),
    ("response", "G (req -> F ack)"),
    ("past", "G (ack -> O req)"),
    ("fields", "G (push(worker=2) -> !pull(worker=2) W done)"),
]
NAMES = ["req", "ack", "push", "pull", "tick", "noise"]


def synthetic_trace(length: int, seed: int = 0) -> list[Event]:
    """Events of a run that satisfies every formula above (no bad, no done, ack last)."""
    rng = random.Random(seed)
    events = []
    for step in range(length):
        name = rng.choice(NAMES)
        fields = {"worker": rng.randrange(4)} if name in ("push", "pull") else {}
        if name == "pull" and fields["worker"] == 2:
            fields["worker"] = 3
        events.append(Event(step, f"rank {step % 4}", name, fields))
    events[-1] = Event(length - 1, "rank 0", "ack", {})  # answers the last req
    return events


def monitor_rate(text: str, events: list[Event]) -> float:
    monitor = Monitor(Automaton(parse_property(text).formula))  # type: ignore[attr-defined]
    positions = [[event] for event in events]
    started = time.perf_counter()
    step = monitor.step
    for position in positions:
        if step(position) is Verdict.VIOLATED:
            raise AssertionError(f"{text} is violated by the synthetic trace")
    return len(events) / (time.perf_counter() - started)


def in_run_rate(text: str, events: list[Event]) -> float:
    """Drive the execution's observer lists the way the step loop does."""
    execution = Execution(chooser=_NoChoices())
    finish = SpecSuite([parse_property(text)]).attach(execution)
    on_step = execution.step_observers
    on_event = execution.event_observers
    started = time.perf_counter()
    for event in events:
        for observer in on_step:
            observer(None, None)  # type: ignore[arg-type]
        for observer in on_event:
            observer(event)
    execution.completed = True
    bug = finish()
    elapsed = time.perf_counter() - started
    if bug is not None or execution.bug is not None:
        raise AssertionError(f"{text} is violated by the synthetic trace")
    return len(events) / elapsed


class _NoChoices:
    def next_agent(self, runnable: object, current: object, step: int) -> int:
        return 0

    def next_value(self, kind: str, options: int) -> int:
        return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=5)
    arguments = parser.parse_args()
    events = synthetic_trace(arguments.events)
    print(f"{'property':<10} {'formula':<46} {'monitor ev/s':>14} {'in a run ev/s':>14}")
    for label, text in FORMULAS:
        alone = max(monitor_rate(text, events) for _ in range(arguments.repeat))
        in_run = max(in_run_rate(text, events) for _ in range(arguments.repeat))
        print(f"{label:<10} {text:<46} {alone:>14,.0f} {in_run:>14,.0f}")


if __name__ == "__main__":
    main()
