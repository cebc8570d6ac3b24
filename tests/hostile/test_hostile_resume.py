"""--resume continues every strategy where it stopped: the resumed campaign finds what the uninterrupted one finds.

The campaign is interrupted by its own target, which presses Ctrl-C in its
Nth run (see targets/slow.py), so at the same execution however fast the
machine is, then resumed with the same command. Counting its runs is part
of the target's behaviour (it touches a file), so every campaign compared
counts them: the uninterrupted one towards a count it never reaches. Bugs, executions, and the per-engine counts of coverage-guided
strategies must equal those of the same campaign run without a stop.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_cli import output, run_cli, target

RACY = [target("slow.py:racy"), "--input", "rounds=30", "--keep-going", "--budget", "40"]
# Its lost update shows in some executions of fuzz divided among two workers.
EASY = [target("slow.py:racy"), "--input", "rounds=3", "--keep-going", "--budget", "64"]
LOCKED = [target("slow.py:locked"), "--input", "workers=2", "--input", "rounds=4", "--budget", "5000"]
# How long an interrupted campaign may take (a hang, not a measure).
PATIENCE_S = 600


def counting(runs: Path, at: int) -> dict[str, str]:
    """The environment in which the target counts its runs in ``runs`` and presses Ctrl-C in run ``at``."""
    return {**os.environ, "INTERRUPT_AT": f"{runs}:{at}"}


def _interrupted(arguments: list[str], out: Path, report: Path, after: int) -> dict[str, str]:
    """Run the campaign until its target presses Ctrl-C in its ``after``-th run; the environment to resume it in."""
    env = counting(out.parent / f"{out.name}.runs", after)
    process = subprocess.Popen(
        [sys.executable, "-m", "dnsse.cli", "check", *arguments, "--out", str(out), "--json", str(report)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env,
    )
    stdout, stderr = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 130, stdout + stderr
    assert "--resume" in stderr
    executions = json.loads((out / "campaign.state").read_text())["executions"]
    assert executions >= 1 and json.loads(report.read_text())["executions"] == executions
    return env


def _outcome(report: Path) -> tuple:
    data = json.loads(report.read_text())
    bugs = [(bug["execution"], bug["kind"], bug["message"]) for bug in data["bugs"]]
    # The advisors' counts (hints proposed, tried, solved, useful) show whether they went on where they were.
    return data["executions"], bugs, data.get("engines"), data.get("advisor"), data.get("verified")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("strategy", "arguments"),
    [("hybrid", RACY), ("llm", RACY), ("fuzz", RACY), ("symbolic", RACY), ("dfs", LOCKED)],
)
def test_a_resumed_campaign_finds_what_the_uninterrupted_one_finds(
    strategy: str, arguments: list[str], tmp_path: Path
) -> None:
    campaign = [*arguments, "--strategy", strategy]
    whole = run_cli(
        "check", *campaign, "--out", str(tmp_path / "a"), "--json", str(tmp_path / "a.json"),
        env=counting(tmp_path / "a.runs", 10**9),
    )
    assert whole.returncode in (0, 1), output(whole)
    out, report = tmp_path / "b", tmp_path / "b.json"
    env = _interrupted(campaign, out, report, after=5)
    resumed = run_cli("check", *campaign, "--resume", str(out), "--json", str(report), env=env)
    assert resumed.returncode == whole.returncode, output(resumed)
    assert _outcome(report) == _outcome(tmp_path / "a.json")
    assert not (out / "campaign.state").exists()


def test_a_resumed_dfs_search_still_verifies(tmp_path: Path) -> None:
    campaign = [*LOCKED, "--strategy", "dfs"]
    out, report = tmp_path / "traces", tmp_path / "report.json"
    env = _interrupted(campaign, out, report, after=5)
    resumed = run_cli("check", *campaign, "--resume", str(out), "--json", str(report), env=env)
    assert resumed.returncode == 0, output(resumed)
    data = json.loads(report.read_text())
    assert data["verified"] is not None and data["verified"]["executions"] == data["executions"]
    assert "verified (no bound" in resumed.stdout


def test_a_damaged_learnt_state_is_bad_input(tmp_path: Path) -> None:
    campaign = [*RACY, "--strategy", "hybrid"]
    out = tmp_path / "traces"
    env = _interrupted(campaign, out, tmp_path / "report.json", after=2)
    state = json.loads((out / "campaign.state").read_text())
    state["strategy_state"]["corpus"] = [{"choices": "none"}]
    (out / "campaign.state").write_text(json.dumps(state))
    resumed = run_cli("check", *campaign, "--resume", str(out), env=env)
    assert resumed.returncode == 2, output(resumed)
    assert "what the hybrid strategy learnt is damaged" in resumed.stderr


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_a_resumed_campaign_of_two_workers_runs_what_the_uninterrupted_one_runs(strategy: str, tmp_path: Path) -> None:
    # Each worker goes on at its next execution with what it had learnt; bugs are compared as a set,
    # since which worker reports a bug first is a matter of timing.
    campaign = [*RACY, "--strategy", strategy, "--workers", "2"]
    whole = run_cli(
        "check", *campaign, "--out", str(tmp_path / "a"), "--json", str(tmp_path / "a.json"),
        env=counting(tmp_path / "a.runs", 10**9),
    )
    assert whole.returncode in (0, 1), output(whole)
    out, report = tmp_path / "b", tmp_path / "b.json"
    env = _interrupted(campaign, out, report, after=8)
    learnt = json.loads((out / "campaign.state").read_text())["strategy_state"]["learnt"]
    assert sorted(learnt) == ["0", "1"]
    resumed = run_cli("check", *campaign, "--resume", str(out), "--json", str(report), env=env)
    assert resumed.returncode == whole.returncode, output(resumed)

    def outcome(path: Path) -> tuple:
        data = json.loads(path.read_text())
        bugs = sorted((bug["kind"], bug["message"]) for bug in data["bugs"])
        return data["executions"], bugs, data["search"], data["coverage"]

    assert outcome(report) == outcome(tmp_path / "a.json")
    if strategy == "random":
        assert outcome(report)[1] == [("exception", "AssertionError: lost update: 1")]
    assert not (out / "campaign.state").exists()


def test_a_state_is_resumed_only_with_the_workers_that_saved_it(tmp_path: Path) -> None:
    campaign = [*RACY, "--strategy", "random"]
    out = tmp_path / "traces"
    env = _interrupted(campaign, out, tmp_path / "report.json", after=3)
    resumed = run_cli("check", *campaign, "--workers", "2", "--resume", str(out), env=env)
    assert resumed.returncode == 2, output(resumed)
    assert "saved by a campaign with --workers 1, not 2" in resumed.stderr


def test_a_resumed_divided_dfs_verifies_in_the_executions_of_the_uninterrupted_one(tmp_path: Path) -> None:
    # Ctrl-C takes every worker's slice back, so the saved tree is the whole search so far.
    campaign = [*LOCKED, "--strategy", "dfs", "--workers", "2"]
    whole = run_cli(
        "check", *campaign, "--out", str(tmp_path / "a"), "--json", str(tmp_path / "a.json"),
        env=counting(tmp_path / "a.runs", 10**9),
    )
    assert whole.returncode == 0, output(whole)
    out, report = tmp_path / "b", tmp_path / "b.json"
    env = _interrupted(campaign, out, report, after=5)
    resumed = run_cli("check", *campaign, "--resume", str(out), "--json", str(report), env=env)
    assert resumed.returncode == 0, output(resumed)
    alone, divided = json.loads((tmp_path / "a.json").read_text()), json.loads(report.read_text())
    assert divided["verified"] is not None and "verified (no bound" in resumed.stdout
    assert divided["executions"] == divided["verified"]["executions"] == alone["verified"]["executions"]


def test_a_campaign_saved_on_this_machine_is_not_resumed_on_a_cluster(tmp_path: Path) -> None:
    # Refused before joining any cluster: the saved progress is that of this machine, not of a Ray driver.
    campaign = [*LOCKED, "--strategy", "dfs"]
    out = tmp_path / "traces"
    env = _interrupted(campaign, out, tmp_path / "report.json", after=3)
    resumed = run_cli("check", *campaign, "--ray-address", "auto", "--resume", str(out), env=env)
    assert resumed.returncode == 2, output(resumed)
    assert "the saved campaign is another one" in resumed.stderr and "--ray-address" in resumed.stderr
    assert "ran on this machine, and this one runs on a Ray cluster" in resumed.stderr
    assert "Traceback" not in resumed.stderr
    # A directed search's rounds on a cluster are not saved: its --resume is refused whatever the state.
    directed = run_cli("check", *LOCKED, "--strategy", "fuzz", "--ray-address", "auto", "--resume", str(out), env=env)
    assert directed.returncode == 2, output(directed)
    assert "not fuzz" in directed.stderr and "Traceback" not in directed.stderr


@pytest.mark.parametrize("strategy", ["hybrid", "fuzz"])
def test_a_resumed_directed_search_of_two_workers_runs_what_the_uninterrupted_one_runs(
    strategy: str, tmp_path: Path
) -> None:
    # It stops at the start of the next round, each worker's corpus and strategy saved there with the merges.
    campaign = [*EASY, "--strategy", strategy, "--workers", "2"]
    whole = run_cli(
        "check", *campaign, "--out", str(tmp_path / "a"), "--json", str(tmp_path / "a.json"),
        env=counting(tmp_path / "a.runs", 10**9),
    )
    assert whole.returncode in (0, 1), output(whole)
    out, report = tmp_path / "b", tmp_path / "b.json"
    env = _interrupted(campaign, out, report, after=20)
    saved = json.loads((out / "campaign.state").read_text())
    assert saved["executions"] % 16 == 0 and saved["executions"] < 64  # a round's end: 8 executions per worker
    assert sorted(saved["strategy_state"]["learnt"]) == ["0", "1"]
    assert saved["strategy_state"]["rounds"]["merged"] == saved["executions"] // 16
    resumed = run_cli("check", *campaign, "--resume", str(out), "--json", str(report), env=env)
    assert resumed.returncode == whole.returncode, output(resumed)

    def outcome(path: Path) -> tuple:
        data = json.loads(path.read_text())
        bugs = sorted((bug["kind"], bug["message"]) for bug in data["bugs"])
        return data["executions"], bugs, data["engines"], data["search"], data["coverage"]

    assert outcome(report) == outcome(tmp_path / "a.json")
    if strategy == "fuzz":
        assert outcome(report)[1] == [("exception", "AssertionError: lost update: 1")]
    assert outcome(report)[3]["shared_corpus_entries"] >= 1
    assert not (out / "campaign.state").exists()
