"""An execution's outcome as JSON, between the process that ran it and the one that records it.

Worker processes of ``--workers`` and the tasks and actors of a Ray
cluster report each execution so; the parent (or the Ray driver) reads it
back as an :class:`~dnsse.engine.runner.ExecutionResult`, merges the arcs
it carries, and turns a worker's failure into the error the user sees.
"""

from __future__ import annotations

from dnsse.coverage.arcs import Arc, ArcRecorder
from dnsse.engine.bugs import Bug
from dnsse.engine.choices import Choice, Chosen
from dnsse.engine.inconclusive import Inconclusive
from dnsse.engine.inputs import show_value
from dnsse.engine.runner import ExecutionResult
from dnsse.errors import BadInput, EngineFailure
from dnsse.frameworks.base import Framework


def execution_report(index: int, result: ExecutionResult) -> dict:
    """An execution's outcome as JSON; :func:`result_from_report` reads it back."""
    return {
        "index": index,
        "bug": result.bug.to_json() if result.bug is not None else None,
        "choices": [_flat(choice) for choice in result.choices],
        "inputs": {name: show_value(value) for name, value in result.inputs.items()},
        "steps": result.steps,
        "elapsed_s": result.elapsed_s,
        "divergence": result.divergence,
        "inconclusive": result.inconclusive.to_json() if result.inconclusive is not None else None,
        "rejected": result.rejected,
    }


def result_from_report(message: dict) -> ExecutionResult:
    """An execution a worker reported as JSON (here, or a Ray worker), as the campaign records it."""
    return ExecutionResult(
        bug=Bug.from_json(message["bug"]) if message["bug"] is not None else None,
        choices=[
            Choice(kind, options, index, Chosen(*chosen) if chosen else None)
            for kind, options, index, *chosen in message["choices"]
        ],
        inputs=message["inputs"],
        steps=message["steps"],
        elapsed_s=message["elapsed_s"],
        divergence=message["divergence"],
        inconclusive=Inconclusive.from_json(message["inconclusive"]) if message.get("inconclusive") else None,
        rejected=message.get("rejected"),
    )


def _flat(choice: Choice) -> list:
    """A choice as one flat list: ``[kind, options, index]``, then what it chose (agent, operation, where).

    Not a trace's form (:meth:`Choice.to_json`, checked as read from a file):
    a report goes from dnsse's own process to dnsse, once per execution, and
    a flat list is encoded in half the time and read in a third.
    """
    chosen = choice.chosen
    if chosen is None:
        return [choice.kind, choice.options, choice.index]
    return [choice.kind, choice.options, choice.index, chosen.agent, chosen.operation, chosen.where]


def new_arcs(recorder: ArcRecorder | None, reported: dict[str, set[Arc]]) -> dict[str, list[list[int]]]:
    """The arcs recorded since the last report, as JSON lists; ``reported`` grows by them."""
    if recorder is None:
        return {}
    new: dict[str, list[list[int]]] = {}
    for path, arcs in recorder.arcs.items():
        sent = reported.setdefault(path, set())
        if len(arcs) == len(sent):
            continue  # arcs only grow, and every reported arc was recorded
        fresh = arcs - sent
        sent |= fresh
        new[path] = [list(arc) for arc in sorted(fresh)]
    return new


def merge_reported_arcs(recorder: ArcRecorder | None, arcs: dict[str, list[list[int]]]) -> None:
    if recorder is None:
        return
    for path, pairs in arcs.items():
        recorder.arcs.setdefault(path, set()).update((start, end) for start, end in pairs)


def worker_failure(worker: int, message: dict) -> BadInput | EngineFailure:
    """A worker's failure as the parent raises it: bad input (exit 2), or dnsse's own failure (exit 3) with the
    worker's traceback."""
    if message["bad_input"]:
        return BadInput(message["error"])
    return EngineFailure(f"worker process {worker} failed with {message['error']}", message["traceback"])


def semantics_of(framework: Framework) -> str | None:
    """What a process's executions modelled (torch: "gloo" or "nccl"; None for other frameworks), for its reports."""
    return getattr(framework, "semantics", None)


def adopt_semantics(framework: Framework, semantics: str | None) -> None:
    """The recording process's framework takes over what a worker's executions modelled, so its report says it."""
    adopt = getattr(framework, "adopt_semantics", None)
    if adopt is not None and semantics is not None:
        adopt(semantics)
