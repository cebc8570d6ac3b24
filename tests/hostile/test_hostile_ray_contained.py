"""A Ray batch or dfs slice whose program killed its Ray worker runs again contained: the crash is a bug, the rest runs.

The task bodies run here, in this process, as a Ray worker would run them:
the program kills only the child processes they start.
"""

from __future__ import annotations

import json
from pathlib import Path

from hostile_cli import output, run_cli, target

from dnsse.campaign.campaign import Campaign
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.worker_reports import result_from_report
from dnsse.campaign.ray_workers import task_settings
from dnsse.campaign.ray_contained import run_batch_contained, run_slice_contained


def _settings_of(function: str, strategy: str, out: Path) -> tuple[str, Campaign]:
    config = CampaignConfig(target=target(f"crashes.py:{function}"), strategy=strategy, seed=0, out=out)
    campaign = Campaign(config)
    return task_settings(config, campaign.target), campaign


def _replays(campaign: Campaign, report: dict, says: str) -> None:
    with campaign.framework.activate():
        campaign.prepare()
        found = campaign.record(result_from_report(report), report["index"] + 1, rerunnable=False)
    assert found is not None
    replayed = run_cli("replay", str(found.trace_path))
    assert replayed.returncode == 1, output(replayed)
    assert "reproduced" in replayed.stdout and says in replayed.stdout


def test_a_batch_comes_back_with_its_crashes_and_every_other_execution(tmp_path: Path) -> None:
    settings, campaign = _settings_of("segfault", "random", tmp_path)
    reports = json.loads(run_batch_contained(settings, 0, 20))
    assert [report["index"] for report in reports] == list(range(20))
    crashes = [report for report in reports if report.get("crashed")]
    assert crashes, "random finds the order that reads address 0 in 20 executions"
    assert all(report["bug"]["kind"] == "crash" and "killed by SIGSEGV" in report["bug"]["message"] for report in crashes)
    assert len(crashes) < len(reports)  # the executions after a crash ran on, in a fresh process
    _replays(campaign, crashes[0], "killed by SIGSEGV")


def test_a_dfs_slice_that_crashes_is_lost_with_its_crash_and_the_executions_before(tmp_path: Path) -> None:
    settings, campaign = _settings_of("crash_or_lost_update", "dfs", tmp_path)
    answer = json.loads(run_slice_contained(settings, [], 64))
    assert answer["lost"] and answer["slice"] is None
    *before, crash = answer["reports"]
    assert crash["crashed"] and "exited with status 5" in crash["bug"]["message"]
    assert all(not report.get("crashed") for report in before)
    _replays(campaign, crash, "exited with status 5")


def test_a_directed_worker_whose_actor_died_runs_its_rounds_on_with_each_crash_a_bug(tmp_path: Path) -> None:
    """The replacement of a fuzz actor: every index of its rounds comes back, crashes as bugs that replay."""
    from dnsse.search.corpus_share import ROUND, Merger
    from dnsse.campaign.ray_contained import ContainedShardWorker

    config = CampaignConfig(target=target("crashes.py:crash_or_race"), strategy="fuzz", seed=0, out=tmp_path, budget=3 * ROUND * 2)
    campaign = Campaign(config)
    settings = task_settings(config, campaign.target)
    actors = [ContainedShardWorker(settings, worker, 2, []) for worker in range(2)]
    merger, merged, reports = Merger(), None, []
    try:
        for number in range(3):
            answers = [json.loads(actor.run_round(number, merged)) for actor in actors]
            for worker, answer in enumerate(answers):
                assert {report["index"] % 2 for report in answer["reports"]} == {worker}
                assert all(report["contained"] for report in answer["reports"])
                reports += answer["reports"]
            merged = json.dumps(merger.merge([answer["learnt"] for answer in answers]))
    finally:
        for actor in actors:
            actor.close()
    assert sorted(report["index"] for report in reports) == list(range(3 * ROUND * 2))
    crashes = [report for report in reports if report.get("crashed")]
    assert crashes, "fuzz tries the flag that exits the process"
    assert all("exited with status 3" in report["bug"]["message"] for report in crashes)
    assert merger.entries >= 1  # the rounds went on sharing what the children found
    assert any(report["bug"] and "lost an update" in report["bug"]["message"] for report in reports)
    _replays(campaign, crashes[0], "exited with status 3")
