"""The Markdown table of a benchmark run, computed from its JSON results only."""

from __future__ import annotations

import statistics
from collections import defaultdict

from benchmarks.catalog import PROGRAMS

STRESS = "stress"


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "–"
    if digits == 0:
        return f"{value:.0f}"
    return f"{value:.{digits}f}"


def _stress_kind(bug: str) -> str:
    return "hang" if bug.startswith("hang") else "exception"


def _seeded_bugs() -> list[tuple[str, str, str]]:
    return [(p.name, v.entry, v.bug or "") for p in PROGRAMS for v in p.variants if not v.correct]


class Summary:
    """Aggregates of the campaigns (and stress runs) of one strategy."""

    def __init__(self, name: str, runs: list[dict], kind: str) -> None:
        self.name = name
        self.kind = kind
        correct = {(p.name, v.entry) for p in PROGRAMS for v in p.variants if v.correct}
        ran = [r for r in runs if not r.get("skipped")]
        self.skipped = sorted({f"{r['program']}: {r['skipped']}" for r in runs if r.get("skipped")})
        by_variant: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for run in ran:
            by_variant[(run["program"], run["variant"])].append(run)
        self.by_variant = by_variant
        self.false_positives = [r for r in ran if (r["program"], r["variant"]) in correct and self._found(r)]
        self.found_bugs = {
            key for key, group in by_variant.items() if key not in correct and any(self._found(r) for r in group)
        }
        self.seeded_ran = {key for key in by_variant if key not in correct}
        to_bug = [r for r in ran if (r["program"], r["variant"]) not in correct and self._found(r)]
        self.median_executions = _median([self._to_bug(r) for r in to_bug])
        self.median_seconds = _median([r["seconds_to_bug"] for r in to_bug])
        rates = [self._rate(r) for r in ran if self._rate(r) > 0]
        self.rate = _median(rates)
        coverage = [
            100.0 * r["branches_covered"] / r["branches_total"]
            for r in ran
            if (r["program"], r["variant"]) in correct and r.get("branches_total")
        ]
        self.coverage = statistics.mean(coverage) if coverage else None

    def _found(self, run: dict) -> bool:
        return bool(run.get("bug_kind") or run.get("bug"))

    def _to_bug(self, run: dict) -> float:
        return run["executions_to_bug"] if self.kind == "dnsse" else run["runs_to_bug"]

    def _rate(self, run: dict) -> float:
        count = run["executions"] if self.kind == "dnsse" else run["runs"]
        return count / run["elapsed_s"] if run.get("elapsed_s") else 0.0

    def cell(self, program: str, variant: str) -> str:
        group = self.by_variant.get((program, variant))
        if not group:
            return "skipped"
        found = [r for r in group if self._found(r)]
        if not found:
            return f"0/{len(group)}"
        executions = _median([self._to_bug(r) for r in found])
        seconds = _median([r["seconds_to_bug"] for r in found])
        kinds = sorted({r.get("bug_kind") or _stress_kind(r["bug"]) for r in found})
        return f"{len(found)}/{len(group)}, {_fmt(executions, 0)} ex, {_fmt(seconds, 2)}s ({'/'.join(kinds)})"

    def coverage_cell(self, program: str) -> str:
        group = self.by_variant.get((program, "main_correct"), [])
        values = [r for r in group if r.get("branches_total")]
        if not values:
            return "–"
        covered = statistics.mean(r["branches_covered"] for r in values)
        total = values[0]["branches_total"]
        return f"{covered:.1f}/{total} ({100.0 * covered / total:.0f}%)"


def render(results: dict) -> str:
    strategies = results["strategies"]
    summaries = [Summary(s, [r for r in results["campaigns"] if r["strategy"] == s], "dnsse") for s in strategies]
    stress = Summary(STRESS, results["stress"], "stress") if results.get("stress") else None
    everyone = summaries + ([stress] if stress else [])
    seeded = _seeded_bugs()
    config = results["config"]
    lines = [
        f"Budget: {config['budget']} executions or {config['time_budget']:g}s per campaign, "
        f"seeds {config['seeds']}, one execution limited to {config['execution_timeout']:g}s; "
        f"stress: up to {config['stress_runs']} uncontrolled runs per variant (at most {config['stress_time']:g}s), "
        f"a run that does not finish in {config['run_timeout']:g}s counts as a hang.",
        "",
        "## Summary",
        "",
        "| strategy | bugs found / seeded | median executions to first bug | median seconds to first bug "
        "| branch coverage (correct versions) | executions/s | false positives |",
        "|---|---|---|---|---|---|---|",
    ]
    for summary in everyone:
        lines.append(
            f"| {summary.name} | {len(summary.found_bugs)} / {len(seeded)}"
            + (f" ({len(seeded) - len(summary.seeded_ran)} not run)" if len(summary.seeded_ran) < len(seeded) else "")
            + f" | {_fmt(summary.median_executions, 0)} | {_fmt(summary.median_seconds, 2)} "
            f"| {_fmt(summary.coverage)}% | {_fmt(summary.rate, 0)} | {len(summary.false_positives)} |"
        )
    lines += [
        "",
        "A bug counts as found by a strategy when at least one seed found it; cells below give "
        "seeds that found it / seeds run, median executions (stress: runs) and seconds to the first report, "
        "and the kind of report. Coverage is branch coverage of the program's own file (coverage.py's "
        "`--branch` counting) over the correct version's campaign, averaged over seeds and programs.",
        "",
        "## Per bug",
        "",
        "| program | variant (seeded bug) | " + " | ".join(s.name for s in everyone) + " |",
        "|---|---|" + "---|" * len(everyone),
    ]
    for program, variant, bug in seeded:
        lines.append(
            f"| {program} | `{variant}` ({bug}) | " + " | ".join(s.cell(program, variant) for s in everyone) + " |"
        )
    lines += ["", "## Branch coverage of the correct versions", ""]
    lines.append("| program | " + " | ".join(s.name for s in everyone) + " |")
    lines.append("|---|" + "---|" * len(everyone))
    for program in PROGRAMS:
        lines.append(f"| {program.name} | " + " | ".join(s.coverage_cell(program.name) for s in everyone) + " |")
    lines += ["", "## The best strategy against each baseline", ""]
    lines += _comparison(summaries, stress, seeded)
    false_positives = [(s.name, r) for s in everyone for r in s.false_positives]
    lines += ["", "## False positives (reports on correct versions)", ""]
    if false_positives:
        for name, run in false_positives:
            lines.append(f"- {name} on {run['program']}: {run.get('bug_kind') or ''} {run.get('bug_message') or run.get('bug')}")
    else:
        lines.append("None: no strategy and no stress run reported anything on a correct version.")
    skipped = [(s.name, reason) for s in everyone for reason in s.skipped]
    if skipped or results.get("unsupported_strategies"):
        lines += ["", "## Not run", ""]
        for name, reason in results.get("unsupported_strategies", {}).items():
            lines.append(f"- strategy {name}: {reason}")
        for name, reason in sorted(set(skipped)):
            lines.append(f"- {name}, {reason}")
    if results.get("peers"):
        from benchmarks.peers import render_peers

        lines += ["", "## Peers on classic plain-threads bugs", ""] + render_peers(results["peers"])
    return "\n".join(lines) + "\n"


def best_strategy(summaries: list[Summary]) -> Summary:
    """Most bugs found; then fewest median executions to a bug."""
    return min(
        summaries,
        key=lambda s: (-len(s.found_bugs), s.median_executions if s.median_executions is not None else float("inf")),
    )


def _comparison(summaries: list[Summary], stress: Summary | None, seeded: list[tuple[str, str, str]]) -> list[str]:
    if not summaries:
        return ["No strategy ran."]
    best = best_strategy(summaries)
    lines = [
        f"Best strategy: **{best.name}** (most seeded bugs found, then fewest executions to a bug): "
        f"{len(best.found_bugs)} of {len(seeded)} seeded bugs"
        + (" — every seeded bug." if len(best.found_bugs) == len(seeded) else "."),
        "",
    ]
    missed = [f"{p}/{v}" for p, v, _ in seeded if (p, v) not in best.found_bugs]
    if missed:
        lines.append(f"- {best.name} did not find: {', '.join(missed)}.")
    for baseline in [s for s in summaries if s is not best] + ([stress] if stress else []):
        losses = []
        for program, variant, _ in seeded:
            mine = _median_to_bug(best, program, variant)
            theirs = _median_to_bug(baseline, program, variant)
            if theirs is not None and (mine is None or theirs < mine):
                losses.append(f"{program}/{variant} ({baseline.name} {theirs:.0f} vs {best.name} {_fmt(mine, 0)})")
        coverage_note = _coverage_note(best, baseline)
        if losses:
            lines.append(f"- against {baseline.name}: {best.name} loses (fewer executions/runs to the bug, or a bug only "
                         f"the baseline found) on {', '.join(losses)}.{coverage_note}")
        else:
            lines.append(f"- against {baseline.name}: {best.name} finds every bug the baseline finds, in no more "
                         f"executions (median).{coverage_note}")
    return lines


def _median_to_bug(summary: Summary, program: str, variant: str) -> float | None:
    group = summary.by_variant.get((program, variant), [])
    found = [summary._to_bug(r) for r in group if summary._found(r)]
    return _median(found)


def _coverage_note(best: Summary, baseline: Summary) -> str:
    """Mean branch coverage of both, over the programs both measured (stress has none for Ray)."""
    mine, theirs = _program_coverage(best), _program_coverage(baseline)
    common = sorted(set(mine) & set(theirs))
    if not common:
        return ""
    a = statistics.mean(mine[p] for p in common)
    b = statistics.mean(theirs[p] for p in common)
    relation = "higher: the baseline wins on coverage" if b > a else ("equal" if b == a else "lower")
    return (f" Coverage over {', '.join(common)}: {baseline.name} {b:.1f}% vs {best.name} {a:.1f}% "
            f"({baseline.name} {relation}).")


def _program_coverage(summary: Summary) -> dict[str, float]:
    percents = {}
    for (program, variant), group in summary.by_variant.items():
        values = [100.0 * r["branches_covered"] / r["branches_total"] for r in group if r.get("branches_total")]
        if variant == "main_correct" and values:
            percents[program] = statistics.mean(values)
    return percents
