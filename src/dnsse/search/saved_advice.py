"""What the advisor engine learnt (``llm``, and ``hybrid``'s advisor), as JSON, so that ``--resume`` goes on where it was.

The advisors' choices follow from what they saw: the summary of every run
so far (operations, observed orders, accesses, bugs, the latest run's steps,
the actors that may crash and their calls that persisted nothing), the hints
queued (orderings, delays, faults, inputs), the hints to try again and how
often each was tried, and
their ranking order, the ledger of which kinds of hint paid off, what the
offline advisor already proposed, each advisor's counts, and the recent
runs the schedule solver orders hints in. All of it is saved as plain JSON
(never pickle), and read back with a type check on every field: the file is
data, a damaged one is refused. Only the recent runs' input slots are not
data (they name the program's parameters): they are rebuilt by running the
last run's choices again. A model's request still in flight at the stop is
not saved; the model is asked again.
"""

from __future__ import annotations

import enum
from collections import Counter
from typing import TYPE_CHECKING

from dnsse.advisor.hints import DelayHint, FaultHint, Hint, InputHint, OperationRef, OrderingHint
from dnsse.advisor.stats import AdvisorStats
from dnsse.advisor.summary import ObservedOrder, RunSummary, Step
from dnsse.engine.operation import Access, Operation
from dnsse.search.recent_runs import RecentRun
from dnsse.search.saved_learning import Rerun, choices_from, choices_json

if TYPE_CHECKING:
    from dnsse.search.llm import LlmStrategy


def advice_state(strategy: LlmStrategy) -> dict:
    return {
        "summary": _summary_state(strategy.summary),
        "queue": [[priority, order, _hint_state(hint)] for priority, order, hint in strategy._queue],
        "order": strategy.next_order,
        "ledger": {"tried": dict(strategy.ledger.tried), "useful": dict(strategy.ledger.useful)},
        "proposed": sorted(strategy.offline._proposed),
        "stats": {advisor.name: _stats_state(advisor.stats) for advisor in strategy.advisors},
        "recent": [_run_state(run) for run in strategy._recent],
        "tries": [[_hint_state(hint), count] for hint, count in strategy._tries.items()],
        "retries": [_hint_state(hint) for hint in strategy._retries],
        "paid": [_hint_state(hint) for hint in strategy._paid],
        "guided": strategy._guided,
        "retried": strategy._retried,
    }


def restore_advice(strategy: LlmStrategy, state: dict, rerun: Rerun) -> None:
    """Put ``state`` back into ``strategy``; ValueError, TypeError or KeyError when it is damaged."""
    strategy._recent.clear()
    for raw in _list(state["recent"]):
        strategy._recent.append(
            RecentRun(
                history=[(int(agent), _operation(operation)) for agent, operation in raw["history"]],
                created_at=[int(step) for step in raw["created_at"]],
                steps=[_step(step) for step in raw["steps"]],
                positions=[int(position) for position in raw["positions"]],
                values=[(str(kind), int(index)) for kind, index in raw["values"]],
                choices=choices_from(_list(raw["choices"])),
            )
        )
    if strategy._recent:
        # The input slots of the last run (and the inputs of the summary) name the program's parameters.
        strategy._learn_inputs(rerun(strategy._recent[-1].choices, False))
    _restore_summary(strategy.summary, state["summary"])
    strategy._queue = [(float(priority), int(order), _hint(raw, strategy.summary)) for priority, order, raw in state["queue"]]
    strategy.next_order = int(state["order"])
    strategy.ledger.tried = Counter({str(shape): int(count) for shape, count in state["ledger"]["tried"].items()})
    strategy.ledger.useful = Counter({str(shape): int(count) for shape, count in state["ledger"]["useful"].items()})
    strategy.offline._proposed = {str(key) for key in _list(state["proposed"])}
    strategy._tries = Counter({_hint(raw, strategy.summary): int(count) for raw, count in state["tries"]})
    strategy._retries = [_hint(raw, strategy.summary) for raw in _list(state["retries"])]
    strategy._paid = {_hint(raw, strategy.summary) for raw in _list(state["paid"])}
    strategy._guided = int(state["guided"])
    strategy._retried = int(state["retried"])
    for advisor in strategy.advisors:
        if advisor.name in state["stats"]:
            advisor.stats = _stats(state["stats"][advisor.name])


def _list(raw: object) -> list:
    if not isinstance(raw, list):
        raise TypeError(f"expected a list, got {type(raw).__name__}")
    return raw


def _step_state(step: Step) -> list:
    return [step.agent, step.kind, [list(pair) for pair in step.objects], step.location]


def _step(raw: list) -> Step:
    agent, kind, objects, location = raw
    return Step(
        str(agent), str(kind), tuple((str(name), str(access)) for name, access in objects),
        None if location is None else str(location),
    )


def _operation_state(operation: Operation) -> list:
    return [operation.kind, [[name, access.value] for name, access in operation.objects], operation.detail]


def _operation(raw: list) -> Operation:
    kind, objects, detail = raw
    return Operation(str(kind), tuple((str(name), Access(access)) for name, access in objects), str(detail))


def _run_state(run: object) -> dict:
    return {
        "history": [[agent, _operation_state(operation)] for agent, operation in run.history],  # type: ignore[attr-defined]
        "created_at": list(run.created_at),  # type: ignore[attr-defined]
        "steps": [_step_state(step) for step in run.steps],  # type: ignore[attr-defined]
        "positions": list(run.positions),  # type: ignore[attr-defined]
        "values": [list(value) for value in run.values],  # type: ignore[attr-defined]
        "choices": choices_json(run.choices),  # type: ignore[attr-defined]
    }


def _summary_state(summary: RunSummary) -> dict:
    """The summary, its dicts and counters as lists in their order (the order hints are made in)."""
    return {
        "executions": summary.executions,
        "operations": [
            [agent, kind, location, times]
            for agent, by_kind in summary.operations.items()
            for kind, by_location in by_kind.items()
            for location, times in by_location.items()
        ],
        "orders": [
            [_step_state(order.first), _step_state(order.second), order.obj, times]
            for order, times in summary.orders.items()
        ],
        "accesses": [
            [name, agent, [_step_state(step) for step in steps]]
            for name, by_agent in summary.accesses.items()
            for agent, steps in by_agent.items()
        ],
        "bugs": list(summary.bugs),
        "last_steps": [_step_state(step) for step in summary.last_steps],
        "uncovered": list(summary.uncovered),
        "restartable": [[actor, sorted(methods)] for actor, methods in summary.restartable.items()],
        "unpersisted": sorted([list(call) for call in summary.unpersisted]),
    }


def _restore_summary(summary: RunSummary, raw: dict) -> None:
    summary.executions = int(raw["executions"])
    summary.operations = {}
    for agent, kind, location, times in raw["operations"]:
        by_kind = summary.operations.setdefault(str(agent), {})
        by_kind.setdefault(str(kind), Counter())[None if location is None else str(location)] = int(times)
    summary.orders = Counter()
    for first, second, obj, times in raw["orders"]:
        summary.orders[ObservedOrder(_step(first), _step(second), str(obj))] = int(times)
    summary.accesses = {}
    for name, agent, steps in raw["accesses"]:
        summary.accesses.setdefault(str(name), {})[str(agent)] = [_step(step) for step in steps]
    summary.bugs = [str(bug) for bug in _list(raw["bugs"])]
    summary.last_steps = [_step(step) for step in raw["last_steps"]]
    summary.uncovered = [str(branch) for branch in _list(raw["uncovered"])]
    summary.restartable = {str(actor): {str(method) for method in methods} for actor, methods in raw["restartable"]}
    summary.unpersisted = {(str(actor), str(method), int(nth)) for actor, method, nth in raw["unpersisted"]}


def _ref_state(ref: OperationRef) -> list:
    return [ref.agent, ref.kind, ref.location, ref.occurrence]


def _ref(raw: list) -> OperationRef:
    agent, kind, location, occurrence = raw
    return OperationRef(
        str(agent),
        None if kind is None else str(kind),
        None if location is None else str(location),
        None if occurrence is None else int(occurrence),
    )


def _hint_state(hint: Hint) -> dict:
    common = {"confidence": hint.confidence, "source": hint.source, "reason": hint.reason}
    if isinstance(hint, OrderingHint):
        return {"sequence": [_ref_state(ref) for ref in hint.sequence], **common}
    if isinstance(hint, DelayHint):
        return {"delay": _ref_state(hint.at), **common}
    if isinstance(hint, FaultHint):
        return {"fault": [hint.actor, hint.method, hint.after], **common}
    value = hint.value
    return {
        "input": hint.name,
        # An enum member is saved by name: its class is the parameter's type, known again at resume.
        "value": {"enum": value.name} if isinstance(value, enum.Enum) else value,
        "confidence": hint.confidence,
        "source": hint.source,
        "reason": hint.reason,
    }


def _hint(raw: dict, summary: RunSummary) -> Hint:
    confidence, source, reason = float(raw["confidence"]), str(raw["source"]), str(raw["reason"])
    if "sequence" in raw:
        return OrderingHint(tuple(_ref(ref) for ref in raw["sequence"]), confidence, source, reason)
    if "delay" in raw:
        return DelayHint(_ref(raw["delay"]), confidence, source, reason)
    if "fault" in raw:
        actor, method, after = raw["fault"]
        return FaultHint(str(actor), str(method), int(after), confidence, source, reason)
    name, value = str(raw["input"]), raw["value"]
    if isinstance(value, dict):
        value = summary.inputs[name].type[str(value["enum"])]
    elif value is not None and not isinstance(value, (bool, int, float, str)):
        raise TypeError(f"input value {value!r}")
    return InputHint(name, value, confidence, source, reason)


def _stats_state(stats: AdvisorStats) -> dict:
    record = stats.to_json()
    record.pop("precision")
    record["latency_s"] = stats.latency_s
    return record


def _stats(raw: dict) -> AdvisorStats:
    fields = dict(raw)
    counted = Counter({str(kind): int(count) for kind, count in fields.pop("discarded_by_reason").items()})
    stats = AdvisorStats(**fields)
    stats.discarded_by_reason = counted
    return stats
