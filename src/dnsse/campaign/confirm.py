"""A bug is announced only once the trace written for it replays it.

Replaying the written trace (read back from disk, every choice checked
against what it recorded) proves three things at once: the trace is
complete, the program is deterministic under control on this schedule, and
the user's ``dnsse replay`` will show the same bug. When it does not come
back, the program is not deterministic under control, which is neither a
bug nor a pass (:class:`~dnsse.errors.NotDeterministic`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from dnsse.engine.bugs import Bug
from dnsse.engine.runner import ExecutionResult
from dnsse.errors import NotDeterministic
from dnsse.campaign.trace import Trace, read_trace

# Words and single marks: a set's elements in another order give the same tokens.
_TOKEN = re.compile(r"\w+|[^\w\s]")

ADVICE = (
    "dnsse cannot promise anything about a program that reads what it does not control (the real clock "
    "outside time.*, real randomness, files or the network, threads or processes it does not run); make "
    "those deterministic, or pass them in as inputs"
)


def unreproduced(trace: Trace, result: ExecutionResult) -> str | None:
    """How a run that followed ``trace`` differs from the recorded one; ``None`` when it showed the bug."""
    if result.inconclusive is not None:
        return f"the replay hit the wall-clock limit ({result.inconclusive.message})"
    if result.divergence is not None:
        return result.divergence
    made = f"the run made the trace's {len(trace.choices)} choices"
    if result.bug is None:
        return f"{made}, but the recorded bug did not happen"
    if not same_bug(result.bug, trace.bug):
        return f"{made}, but it showed another bug ({result.bug.kind}: {result.bug.message})"
    return None


def same_bug(shown: Bug, recorded: Bug) -> bool:
    """Whether a replay showed the recorded bug: the same kind and message, up to the order of its words.

    A message may print a set (``assert done == {a}`` shows ``done``), and a
    set of the program's objects iterates in the order of their addresses
    in memory, which no schedule decides: the same failure can list the
    same elements in another order.
    """
    if shown.signature() == recorded.signature():
        return True
    (kind, message), (recorded_kind, recorded_message) = shown.signature(), recorded.signature()
    return kind == recorded_kind and sorted(_TOKEN.findall(message)) == sorted(_TOKEN.findall(recorded_message))


def confirm(path: Path, run: Callable[[Trace], ExecutionResult], execution: int) -> None:
    """Replay the trace at ``path`` with ``run``; NotDeterministic (and no trace left) unless its bug comes back."""
    trace = read_trace(path)
    why = unreproduced(trace, run(trace))
    if why is None:
        return
    path.unlink(missing_ok=True)
    raise NotDeterministic(
        f"the program is not deterministic under control: the {trace.bug.kind} found in execution {execution} "
        f"did not come back when its trace was replayed ({why}). {ADVICE}, and run again."
    )
