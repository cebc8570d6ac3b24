"""Branch coverage against executions, per strategy, averaged over the correct versions' campaigns."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path


def coverage_series(campaigns: list[dict], budget: int) -> dict[str, list[float]]:
    """strategy -> mean percent covered after 1..budget executions."""
    curves: dict[str, list[list[float]]] = defaultdict(list)
    for run in campaigns:
        if run.get("skipped") or run["variant"] != "main_correct" or not run.get("branches_total"):
            continue
        total = run["branches_total"]
        points = sorted(run["coverage_curve"])
        series, covered, index = [], 0, 0
        for execution in range(1, budget + 1):
            while index < len(points) and points[index][0] <= execution:
                covered = points[index][1]
                index += 1
            series.append(100.0 * covered / total)
        curves[run["strategy"]].append(series)
    return {name: [sum(column) / len(column) for column in zip(*runs)] for name, runs in curves.items()}


def plot_coverage(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budget = results["config"]["budget"]
    series = coverage_series(results["campaigns"], budget)
    figure, axes = plt.subplots(figsize=(6, 3.6), dpi=100)
    for name, values in sorted(series.items()):
        axes.plot(range(1, len(values) + 1), values, label=name)
    stress = {
        r["program"]: 100.0 * r["branches_covered"] / r["branches_total"]
        for r in results.get("stress", [])
        if r["variant"] == "main_correct" and r.get("branches_total")
    }
    if stress:
        # Stress has no coverage for Ray programs: compare on the programs it measured.
        same = coverage_series([r for r in results["campaigns"] if r["program"] in stress], budget)
        best = max(same.items(), key=lambda item: item[1][-1]) if same else None
        label = f"stress after all runs ({', '.join(sorted(stress))})"
        if best is not None:
            label += f"; {best[0]} on those: {best[1][-1]:.1f}%"
        axes.axhline(sum(stress.values()) / len(stress), linestyle="--", color="grey", label=label)
    axes.set_xscale("log")
    axes.set_xlabel("executions")
    axes.set_ylabel("branch coverage of the program (%)")
    axes.set_title("Correct versions: mean over programs and seeds (stress: torch and threads)", fontsize=9)
    axes.legend(fontsize=7)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
