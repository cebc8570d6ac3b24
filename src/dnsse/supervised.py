"""The supervising side of ``dnsse check`` and ``dnsse replay`` (see dnsse.campaign.supervisor).

The child process does the work and prints its own results. This side only
speaks when the child could not: a crash (the bug, its trace, and, unless
the campaign goes on in a fresh child, the summary and reports), or a child
that had to be killed after Ctrl-C or SIGTERM (the summary from the saved
state).
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import time
from pathlib import Path

from dnsse import exit_codes
from dnsse.engine.bugs import Bug
from dnsse.engine.memory import default_memory_limit, machine_memory
from dnsse.engine.target import target_file_name
from dnsse.campaign.trace import read_trace
from dnsse.campaign.resume import SavedBug, SavedCampaign, discard_state, load_state, save_state
from dnsse.campaign.supervisor import (
    MAX_RESTARTS,
    STOP_GRACE_S,
    ChildEnd,
    Supervisor,
    crash_bug,
    crash_trace,
)



def supervise_check(arguments: argparse.Namespace, argv: list[str]) -> int:
    """``dnsse check`` in a watched child; crashes become bugs and the campaign goes on or ends cleanly."""
    started = time.perf_counter()
    supervisor = Supervisor(
        argv, stop_after_s=arguments.execution_timeout + STOP_GRACE_S, memory_limit=arguments.memory_bytes
    )
    resume = ["--continues"] + ([] if arguments.resume is not None else ["--resume", str(arguments.out)])
    extra: list[str] = []
    try:
        for _ in range(MAX_RESTARTS):
            end = supervisor.run(extra)
            if end.killed:
                return _summary_after_kill(arguments, end)
            if not end.crashed:
                if end.status == exit_codes.RESTART:
                    extra = resume
                    continue
                return end.status
            record = end.record
            template = supervisor.template()
            if record is None or template is None:
                sys.stderr.write(
                    f"dnsse: the program killed the process while it was being loaded ({crash_bug(end, []).message}), "
                    "before any execution. Run it with plain Python to see why.\n"
                )
                return exit_codes.BAD_INPUT
            bug = crash_bug(end, supervisor.fault_lines(target_file_name(arguments.target)))
            state = _saved_state(arguments, template)
            state.executions = max(state.executions, record.execution)
            state.elapsed_s = max(state.elapsed_s, time.perf_counter() - started)
            if all(saved.to_bug().signature() != bug.signature() for saved in state.bugs):
                path = crash_trace(supervisor, bug, record, arguments.out)
                _announce(bug, record.execution, path)
                trace = str(path) if path is not None else ""
                state.bugs.append(SavedBug(bug.to_json(), record.execution, trace, state.elapsed_s))
            save_state(state, arguments.out)
            budget_left = arguments.budget is None or state.executions < arguments.budget
            if arguments.keep_going and arguments.strategy != "dfs" and budget_left and end.interrupted is None:
                extra = resume
                continue
            return _finish_from_state(arguments, state, interrupted=end.interrupted)
        sys.stderr.write(f"dnsse: the campaign needed more than {MAX_RESTARTS} fresh processes; stopping\n")
        return exit_codes.BUG if load_state(arguments.out).bugs else 0
    finally:
        supervisor.close()


def supervise_replay(arguments: argparse.Namespace, argv: list[str]) -> int:
    """``dnsse replay`` in a watched child: a replay that kills its process is told as a crash."""
    trace = read_trace(arguments.trace)  # bad input is said here, before any process starts
    # The recorded run's memory limit, so that memory is exhausted where it was (at most this machine's).
    limit = default_memory_limit(1) if trace.memory_limit is None else min(trace.memory_limit, machine_memory())
    supervisor = Supervisor(argv, stop_after_s=trace.limits.max_seconds + STOP_GRACE_S, memory_limit=limit)
    try:
        end = supervisor.run()
        if end.killed:
            return exit_codes.TERMINATED if end.interrupted == signal.SIGTERM else exit_codes.INTERRUPTED
        if not end.crashed:
            return end.status
        source = target_file_name(trace.target)
        bug = crash_bug(end, supervisor.fault_lines(source))
        reproduced = bug.signature() == trace.bug.signature()
        print(f"dnsse: replaying {arguments.trace} ({trace.target}, {len(trace.choices)} choices)")
        print("reproduced:" if reproduced else "a different bug than the recorded one happened:")
        print(_indent(bug.render()))
        return exit_codes.BUG
    finally:
        supervisor.close()


def _announce(bug: Bug, execution: int, path: Path | None) -> None:
    print(f"\nfound a bug in execution {execution}:")
    print(_indent(bug.render()))
    if path is None:
        print("no trace: the execution made more choices than the flight recorder holds")
    else:
        print(f"trace:  {path}")
        print(f"replay: dnsse replay {shlex.quote(str(path))}")
    sys.stdout.flush()


def _saved_state(arguments: argparse.Namespace, template: dict) -> SavedCampaign:
    """The campaign's saved state (made from the template if none was saved yet)."""
    try:
        state = load_state(arguments.out)
    except Exception:  # noqa: BLE001 - nothing saved yet: the crash came before the first save
        state = SavedCampaign(
            target=template["target"],
            framework=template["framework"],
            strategy=template["strategy"],
            seed=arguments.seed,
            world_size=template["world_size"],
        )
    return state


def _summary_after_kill(arguments: argparse.Namespace, end: ChildEnd) -> int:
    """The child did not stop in time after Ctrl-C or SIGTERM: the summary from its saved state."""
    try:
        state = load_state(arguments.out)
    except Exception:  # noqa: BLE001 - killed before it saved anything
        sys.stderr.write("dnsse: interrupted before the first execution ended\n")
        return exit_codes.TERMINATED if end.interrupted == signal.SIGTERM else exit_codes.INTERRUPTED
    return _finish_from_state(arguments, state, interrupted=end.interrupted or signal.SIGINT, keep=True)


def _finish_from_state(
    arguments: argparse.Namespace, state: SavedCampaign, interrupted: int | None, keep: bool = False
) -> int:
    from dnsse.report.check_summary import finish_check
    from dnsse.campaign.config import CampaignResult, FoundBug, InconclusiveRun

    result = CampaignResult(
        target=state.target,
        framework=state.framework,
        strategy=state.strategy,
        world_size=state.world_size,
        executions=state.executions,
        elapsed_s=state.elapsed_s,
        bugs=[FoundBug(b.to_bug(), b.execution, Path(b.trace), b.elapsed_s, b.inputs) for b in state.bugs],
        interrupted=interrupted,
        inconclusive=[InconclusiveRun.from_json(raw) for raw in state.inconclusive],
    )
    if not keep and interrupted is None:
        discard_state(arguments.out)
    return finish_check(arguments, result, [None] * len(result.bugs))


def _indent(text: str) -> str:
    return "\n".join("  " + line if line else "" for line in text.splitlines())
