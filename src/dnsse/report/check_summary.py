"""The end of ``dnsse check``: the reports written, the summary printed, and the exit status.

Shared by the command line and by the supervising process that writes the
summary of a campaign whose own process died (see dnsse.supervised).
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys

from dnsse import exit_codes
from dnsse.campaign.config import CampaignResult
from dnsse.campaign.resume import state_path

_ENGINE_BASICS = ("executions", "new_branches", "new_interleavings", "bugs", "first_bug_execution")


def bound_line(strategy: str, notes: dict[str, int]) -> str:
    """What an iteratively bounded search (ipb, idb) covered when it stopped."""
    measure = "preemptions" if strategy == "ipb" else "delays"
    covered = notes["bound_covered"]
    done = (
        f"{strategy} ran every schedule with at most {covered} {measure}"
        if covered >= 0
        else f"{strategy} did not finish bound 0"
    )
    if notes["bound_in_progress"] < 0:
        return f"{done}, and no larger bound had more to run"
    return (
        f"{done}; bound {notes['bound_in_progress']} was in progress "
        f"({notes['executions_in_bound_in_progress']} of its schedules run)"
    )


def finish_check(arguments: argparse.Namespace, result: CampaignResult, stories: list) -> int:
    """Write the reports and the summary of a campaign; its exit status."""
    from dnsse.report.files import write_reports
    from dnsse.report.summary import campaign_report, write_json_atomically

    if arguments.json is not None:
        write_json_atomically(campaign_report(result, arguments.seed, stories), arguments.json)
    write_reports(arguments, result, stories)
    status = exit_codes.BUG if result.bugs else exit_codes.CLEAN
    if result.interrupted is not None:
        status = exit_codes.TERMINATED if result.interrupted == signal.SIGTERM else exit_codes.INTERRUPTED
        # A campaign that saves no state (a directed search killed before its first round) cannot go on.
        resumable = state_path(arguments.out).exists()
        sys.stderr.write(
            f"dnsse: interrupted after {result.executions} executions; the reports so far are written. "
            + (
                f"Continue the campaign with the same command and --resume {shlex.quote(str(arguments.out))}\n"
                if resumable
                else "It saved no state to resume from: run it again\n"
            )
        )
    if result.inconclusive:
        warn_inconclusive(result, arguments.quiet)
    if arguments.quiet:
        return status
    rate = result.executions / result.elapsed_s if result.elapsed_s > 0 else 0.0
    summary = (
        f"{counted(len(result.bugs), 'bug')} in {counted(result.executions, 'execution')} "
        f"({result.elapsed_s:.2f}s, {rate:.0f} executions/s, {result.framework}"
        f"{f', {result.semantics} semantics' if result.semantics else ''}, {result.strategy})"
    )
    if result.inconclusive:
        summary += f", {len(result.inconclusive)} inconclusive"
    if result.rejected:
        summary += f", {counted(result.rejected, 'input')} rejected by the program"
    print(f"\n{summary}" if result.bugs else f"no bug found: {summary}")
    if result.known is not None and result.known.replayed:
        known = result.known
        dropped = f", {known.dropped} no longer fail{'s' if known.dropped == 1 else ''} (dropped)" if known.dropped else ""
        print(
            f"known failures of this target (--out {arguments.out}/known, off with --no-db): "
            f"{known.replayed} replayed first, {known.still_failing} still fail{'s' if known.still_failing == 1 else ''}{dropped}"
        )
    if result.coverage is not None:
        covered = result.coverage
        print(f"branch coverage of the target: {covered.branches_covered}/{covered.branches_total} ({covered.shown})")
    if arguments.verbose:
        # What each engine and advisor contributed: for those who tune the search, not for every run.
        for name, counts in (result.engines or {}).items():
            extra = "".join(f", {counts[key]} {key}" for key in counts if key not in _ENGINE_BASICS)
            print(
                f"  {name}: {counts['executions']} executions, {counts['new_branches']} new branches, "
                f"{counts['new_interleavings']} new interleavings, {counts['bugs']} bugs{extra}"
            )
        for name, counts in (result.advisor or {}).items():
            print(advisor_line(name, counts))
    spins = result.search.get("spinning_agents_dropped", 0)
    if spins:
        print(
            f"pct caught an agent spinning {spins} time{'s' if spins != 1 else ''} "
            f"(in {result.search['executions_with_spinning']} executions): it repeated an operation with no write "
            "anywhere in between, so it was treated as waiting and run last"
        )
    if "bound_covered" in result.search:
        print(bound_line(result.strategy, result.search))
    if result.verified is not None:
        print(verified_line(result.verified))
    elif result.unverified is not None:
        print(f"not verified: dfs ran every schedule it could tell apart, but {result.unverified}")
    elif arguments.strategy == "dfs" and not result.bugs:
        print(f"not verified: dfs did not finish its search within the budget ({result.executions} executions)")
    sys.stdout.flush()
    return status


def warn_inconclusive(result: CampaignResult, quiet: bool) -> None:
    """Executions that hit the wall-clock limit: where each agent stood, and a warning that stays with exit 0."""
    runs = result.inconclusive
    if not quiet:
        for run in runs:
            print(f"\nexecution {run.execution} was inconclusive, neither a bug nor a pass:")
            print("\n".join("  " + line for line in run.inconclusive.render().splitlines()))
    count = f"{len(runs)} execution{'s' if len(runs) != 1 else ''}"
    sys.stdout.flush()
    sys.stderr.write(
        f"dnsse: warning: {count} hit the wall-clock limit (execution {', '.join(str(r.execution) for r in runs[:5])}"
        f"{', ...' if len(runs) > 5 else ''}) and could not be judged, so the result is inconclusive for "
        f"{'them' if len(runs) != 1 else 'it'}. If the program is only slow there, give it a longer "
        "--execution-timeout; otherwise an agent waits in a call dnsse does not control (see where each agent "
        "stood)\n"
    )
    sys.stderr.flush()


def counted(number: int, noun: str) -> str:
    """``1 bug``, ``2 bugs``, ``0 bugs``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def advisor_line(name: str, counts: dict) -> str:
    """One line per advisor: what it cost and how many of its hints paid off."""
    line = (
        f"advisor {name}: {counts['received']} hints proposed, {counts['discarded']} discarded, "
        f"{counts['tried']} tried, {counts['useful']} useful"
    )
    if counts.get("found_bugs"):
        line += f" (a bug from the hint {counts['found_bugs'][0]})"
    if name != "offline":
        line += (
            f"; {counts['calls']} calls, {counts['cache_hits']} cache hits, {counts['failures']} failed, "
            f"{counts['prompt_tokens'] + counts['completion_tokens']} tokens, {counts['latency_s']:.1f}s"
        )
    return line


def verified_line(verified: dict) -> str:
    bound = "no bound" if verified["bound"] == "none" else verified["bound"]
    if "max_delay" in verified:
        delay = verified["max_delay"]
        bound += f", delays <= {delay if delay == 'inf' else f'{delay:g}s'}"
    return (
        f"verified ({bound}, {verified['executions']} executions, {verified['method']}): {verified['covers']}. "
        f"Not covered: {verified['excludes']}."
    )
