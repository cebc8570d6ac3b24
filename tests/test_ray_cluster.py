"""--ray-address: a campaign's executions as tasks on a real Ray cluster, the same bugs whatever the workers."""

from __future__ import annotations

import json
import os
import tempfile
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from dnsse.campaign.campaign import Campaign
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign
from dnsse.campaign.ray_batches import batch_task
from dnsse.campaign.ray_workers import task_settings
from dnsse.campaign.worker_reports import adopt_semantics

PROGRAMS = Path(__file__).parent / "programs"
RACE = f"{PROGRAMS}/report_prints.py:main"
# Where a test tells the cluster's workers to interrupt a campaign (one file per test process, there only
# while that campaign runs).
INTERRUPT_CONTROL = Path(tempfile.gettempdir()) / f"dnsse-interrupt-{os.getpid()}.json"
NCCL_PROGRAM = f"{Path(__file__).parent}/real_programs/nccl_vs_gloo.py:item_after_all_reduce"


def batch_settings() -> str:
    config = CampaignConfig(target=RACE, strategy="pct", seed=5)
    return task_settings(config, Campaign(config).target)


def test_a_batch_depends_only_on_its_indices_so_workers_do_not_change_executions() -> None:
    settings = batch_settings()
    whole = json.loads(batch_task(settings, 0, 6))
    halves = json.loads(batch_task(settings, 3, 3)) + json.loads(batch_task(settings, 0, 3))
    halves.sort(key=lambda report: report["index"])
    assert [r["index"] for r in whole] == list(range(6))
    assert [r["choices"] for r in whole] == [r["choices"] for r in halves]
    assert [r["bug"] for r in whole] == [r["bug"] for r in halves]


def test_a_batch_asks_the_model_within_its_share_and_reports_its_counts(tmp_path: Path, monkeypatch) -> None:
    """The driver passes the model settings to each task; a task's last report carries what its strategy counted."""
    from fake_openai import Canned, FakeOpenAI

    from dnsse.advisor.model import ModelSettings
    from dnsse.campaign.worker_totals import WorkerTotals

    monkeypatch.setenv("DNSSE_LLM_API_KEY", "sk-batch-test")
    server = FakeOpenAI()
    server.behaviours.extend([Canned('{"hints": []}')] * 3)
    try:
        model = ModelSettings(base_url=server.base_url, model="canned-7b", cache_dir=tmp_path / "cache")
        config = CampaignConfig(target=f"{PROGRAMS}/advisor_window.py:main", strategy="hybrid", advisor=model)
        settings = task_settings(config, Campaign(config).target)
        totals = WorkerTotals()
        for first, calls in ((0, 1), (8, 0)):
            reports = json.loads(batch_task(settings, first, 8, calls))
            totals.update(first, reports[-1])
    finally:
        server.close()
    advisor = totals.advisor()
    assert advisor is not None and advisor["model"]["calls"] == len(server.requests) == 1
    assert server.requests[0]["model"] == "canned-7b"
    engines = totals.engines()
    assert engines is not None and sum(engine["executions"] for engine in engines.values()) == 16


def test_ray_actors_of_a_directed_search_run_the_rounds_the_worker_processes_run() -> None:
    """Two actors (here plain objects) of hybrid: disjoint executions, one merged corpus, as --workers 2 divides."""
    from dnsse.search.corpus_share import ROUND, Merger
    from dnsse.campaign.ray_rounds import ShardWorker

    config = CampaignConfig(target=f"{PROGRAMS}/directed_inputs.py:pool_race", strategy="hybrid", budget=3 * ROUND * 2)
    settings = task_settings(config, Campaign(config).target)
    actors = [ShardWorker(settings, worker, 2) for worker in range(2)]
    merger, merged, indices = Merger(), None, []
    for number in range(3):
        answers = [json.loads(actor.run_round(number, merged)) for actor in actors]
        for worker, answer in enumerate(answers):
            assert [r["index"] % 2 for r in answer["reports"]] == [worker] * ROUND
            indices += [r["index"] for r in answer["reports"]]
        merged = json.dumps(merger.merge([answer["learnt"] for answer in answers]))
    assert sorted(indices) == list(range(3 * ROUND * 2))
    assert merger.entries >= 1
    for actor in actors:
        actor.sharing.absorb(json.loads(merged))
    assert [e.key for e in actors[0].sharing.corpus.entries] == [e.key for e in actors[1].sharing.corpus.entries]
    # Every engine of the portfolio counts its executions; together, all the round's.
    assert sum(engine["executions"] for answer in answers for engine in answer["engines"].values()) == 3 * ROUND * 2


@pytest.mark.parametrize("backend", ["gloo", "nccl"])
def test_a_batch_reports_the_torch_semantics_its_executions_modelled(backend: str) -> None:
    """The driver's report names the semantics the tasks' executions used, as without a cluster."""
    config = CampaignConfig(target=NCCL_PROGRAM, strategy="random", seed=1, inputs={"backend": backend})
    campaign = Campaign(config)
    reports = json.loads(batch_task(task_settings(config, campaign.target), 0, 2))
    assert reports[-1]["semantics"] == backend
    adopt_semantics(campaign.framework, reports[-1]["semantics"])
    assert campaign.result("random", 2).semantics == backend


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray cluster started by this test process (and only stopped by it)."""
    ray = pytest.importorskip("ray", reason="real Ray is not installed (pip install ray)")
    previous = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"  # no token file shared with other Ray users of this machine
    os.environ["INTERRUPT_CONTROL"] = str(INTERRUPT_CONTROL)  # the workers start with it (slow.py)
    try:
        try:
            ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        except Exception as error:  # noqa: BLE001 - any failure to start means this machine cannot run Ray
            pytest.skip(f"real Ray cannot start here: {type(error).__name__}: {error}")
        try:
            yield ray.get_runtime_context().gcs_address
        finally:
            ray.shutdown()
    finally:
        os.environ.pop("INTERRUPT_CONTROL", None)
        if previous is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = previous


@pytest.mark.ray
@pytest.mark.slow
def test_the_same_seed_finds_the_same_bug_on_one_or_two_ray_workers(cluster: str, tmp_path: Path) -> None:
    found = {}
    for workers in (1, 2):
        ran = subprocess.run(
            [
                sys.executable, "-m", "dnsse.cli", "check", RACE, "--strategy", "random", "--seed", "0",
                "--ray-address", cluster, "--workers", str(workers), "--out", str(tmp_path / str(workers)),
                "--json", str(tmp_path / f"{workers}.json"), "--quiet",
            ],
            capture_output=True, text=True, timeout=600, env={**os.environ, "RAY_AUTH_MODE": "disabled"},
        )
        assert ran.returncode == 1, ran.stdout + ran.stderr[-3000:]
        report = json.loads((tmp_path / f"{workers}.json").read_text())
        found[workers] = [(bug["kind"], bug["message"], bug["execution"]) for bug in report["bugs"]]
    # The execution number depends on the campaign's schedules, not on the number of workers.
    assert found[1] == found[2]
    assert [(kind, message) for kind, message, _ in found[1]] == [("exception", "AssertionError: lost update: count is 1")]
    replayed = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "replay", str(tmp_path / "2" / "bug-1.json")],
        capture_output=True, text=True, timeout=600,
    )
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout


def test_dfs_tasks_divide_the_tree_and_explore_each_schedule_once() -> None:
    """Tasks of a few executions each, their frontiers divided anew: the schedules of one process, once each."""
    from dnsse.search.dfs_share import DfsShare
    from dnsse.search.dfs_slice import Slice
    from dnsse.campaign.ray_dfs import slice_task

    target = f"{PROGRAMS}/threads_counter.py:locked"
    config = CampaignConfig(target=target, strategy="dfs")
    settings = task_settings(config, Campaign(config).target)
    share = DfsShare(None)
    choices = []
    while True:
        units = [unit for unit in (share.take(deepest=False) for _ in range(2)) if unit is not None]
        if not units:
            break
        for unit in units:
            answer = json.loads(slice_task(settings, unit.prefix, 2))
            choices += [json.dumps(report["choices"]) for report in answer["reports"]]
            share.absorb(unit, Slice.from_json(answer["slice"]))
    alone = run_campaign(CampaignConfig(target=target, strategy="dfs", budget=None))
    assert alone.verified is not None
    assert len(choices) == len(set(choices)) == alone.executions
    assert share.summary().verified() is not None


@pytest.mark.ray
@pytest.mark.slow
def test_dfs_on_two_ray_workers_exhausts_with_the_single_process_verdict(cluster: str, tmp_path: Path) -> None:
    target = f"{PROGRAMS}/threads_counter.py:locked"
    reports = {}
    for where in (["--workers", "1"], ["--ray-address", cluster, "--workers", "2"]):
        ran = subprocess.run(
            [sys.executable, "-m", "dnsse.cli", "check", target, "--strategy", "dfs", *where,
             "--out", str(tmp_path), "--json", str(tmp_path / "r.json"), "--quiet"],
            capture_output=True, text=True, timeout=600, env={**os.environ, "RAY_AUTH_MODE": "disabled"},
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr[-3000:]
        reports[len(reports)] = json.loads((tmp_path / "r.json").read_text())
    assert reports[1]["verified"] is not None
    assert reports[1]["verified"]["covers"] == reports[0]["verified"]["covers"]
    assert reports[1]["executions"] == reports[0]["executions"]


@pytest.mark.ray
@pytest.mark.slow
def test_a_directed_search_on_two_ray_workers_runs_what_two_worker_processes_run(cluster: str, tmp_path: Path) -> None:
    """The same seed and number of workers: the same divided hybrid search on a cluster as on this machine."""
    reports = []
    for where in (["--workers", "2"], ["--ray-address", cluster, "--workers", "2"]):
        out = tmp_path / str(len(reports))
        ran = subprocess.run(
            [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS}/directed_inputs.py:pool_race", "--seed", "3",
             "--budget", "48", "--keep-going", "--no-minimize", *where, "--out", str(out), "--json", str(out / "r.json"),
             "--quiet"],
            capture_output=True, text=True, timeout=600, env={**os.environ, "RAY_AUTH_MODE": "disabled"},
        )
        assert ran.returncode in (0, 1), ran.stdout + ran.stderr[-3000:]
        reports.append(json.loads((out / "r.json").read_text()))
    local, ray_run = reports
    assert ray_run["executions"] == local["executions"] == 48
    assert ray_run["engines"] == local["engines"]
    assert ray_run["search"]["shared_corpus_entries"] == local["search"]["shared_corpus_entries"] >= 1
    assert {(b["kind"], b["message"]) for b in ray_run["bugs"]} == {(b["kind"], b["message"]) for b in local["bugs"]}


@pytest.mark.slow
@pytest.mark.ray
@pytest.mark.parametrize("strategy", ["random", "hybrid"])
def test_the_json_report_names_the_torch_semantics_on_a_cluster_as_without_one(
    strategy: str, cluster: str, tmp_path: Path
) -> None:
    """Batches of tasks (random) and rounds of actors (hybrid) both pass the semantics up."""
    reports = {}
    for where in ("local", "cluster"):
        command = [
            sys.executable, "-m", "dnsse.cli", "check", NCCL_PROGRAM, "--input", "backend=nccl", "--strategy", strategy,
            "--budget", "4", "--out", str(tmp_path / where), "--json", str(tmp_path / f"{where}.json"), "--quiet",
        ]
        if where == "cluster":
            command += ["--ray-address", cluster, "--workers", "1"]
        ran = subprocess.run(
            command, capture_output=True, text=True, timeout=600, env={**os.environ, "RAY_AUTH_MODE": "disabled"}
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr[-3000:]
        reports[where] = json.loads((tmp_path / f"{where}.json").read_text())
    assert reports["local"]["semantics"] == reports["cluster"]["semantics"] == "nccl"


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["random", "dfs"])
def test_a_program_that_kills_its_ray_worker_is_a_crash_bug_and_the_campaign_goes_on(
    strategy: str, cluster: str, tmp_path: Path
) -> None:
    crashes = Path(__file__).parent / "hostile" / "targets" / "crashes.py"
    ran = subprocess.run(
        [
            sys.executable, "-m", "dnsse.cli", "check", f"{crashes}:crash_or_lost_update", "--strategy", strategy,
            "--ray-address", cluster, "--workers", "2", "--budget", "60", "--keep-going",
            "--out", str(tmp_path / "traces"), "--json", str(tmp_path / "report.json"),
        ],
        capture_output=True, text=True, timeout=600, env={**os.environ, "RAY_AUTH_MODE": "disabled"},
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert sorted(bug["kind"] for bug in report["bugs"]) == ["crash", "exception"]
    assert report["verified"] is None
    crash = next(bug for bug in report["bugs"] if bug["kind"] == "crash")
    replayed = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "replay", crash["trace"]], capture_output=True, text=True, timeout=600
    )
    assert replayed.returncode == 1 and "exited with status 5" in replayed.stdout, replayed.stdout + replayed.stderr


@pytest.mark.ray
@pytest.mark.slow
def test_a_program_that_kills_an_actor_of_a_directed_search_is_a_crash_bug_and_the_campaign_goes_on(
    cluster: str, tmp_path: Path
) -> None:
    """fuzz's actor dies with the flag that exits; its replacement runs the round again contained."""
    crashes = Path(__file__).parent / "hostile" / "targets" / "crashes.py"
    ran = subprocess.run(
        [
            sys.executable, "-m", "dnsse.cli", "check", f"{crashes}:crash_or_race", "--strategy", "fuzz", "--seed", "0",
            "--ray-address", cluster, "--workers", "2", "--budget", "48", "--keep-going",
            "--out", str(tmp_path / "traces"), "--json", str(tmp_path / "report.json"),
        ],
        capture_output=True, text=True, timeout=600, env={**os.environ, "RAY_AUTH_MODE": "disabled"},
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["executions"] == 48
    assert sorted(bug["kind"] for bug in report["bugs"]) == ["crash", "exception"]
    crash = next(bug for bug in report["bugs"] if bug["kind"] == "crash")
    assert "exited with status 3" in crash["message"]
    replayed = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "replay", crash["trace"]], capture_output=True, text=True, timeout=600
    )
    assert replayed.returncode == 1 and "exited with status 3" in replayed.stdout, replayed.stdout + replayed.stderr


SLOW = Path(__file__).parent / "hostile" / "targets" / "slow.py"


def _ray_check(directory: Path, target: str, *arguments: str) -> subprocess.Popen:
    # Through a shell that writes its process id before it becomes the driver (exec keeps the id), so a
    # target that interrupts the campaign knows where to send the signal before the campaign starts.
    return subprocess.Popen(
        [
            "sh", "-c", 'echo $$ > "$0" && exec "$@"', str(directory / "driver.pid"),
            sys.executable, "-m", "dnsse.cli", "check", target, *arguments,
            "--out", str(directory / "traces"), "--json", str(directory / "report.json"),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "RAY_AUTH_MODE": "disabled"},
    )


def _interrupted_in_its_run(directory: Path, at: int) -> None:
    """The campaign started in ``directory`` from now on is sent Ctrl-C by its target's run ``at``
    (slow.py's INTERRUPT_CONTROL, which the cluster's workers were started with): at the same point
    however loaded the machine is."""
    settings = {"runs": str(directory / "runs"), "at": at, "signal": "INT", "pid_file": str(directory / "driver.pid")}
    written = INTERRUPT_CONTROL.with_suffix(".partial")
    written.write_text(json.dumps(settings))
    written.rename(INTERRUPT_CONTROL)


@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize(
    ("strategy", "inputs", "budget", "at"),
    [
        # Run 100 comes after batches of 16 came back and were counted (two run at a time, in order).
        ("random", ["--input", "rounds=3"], "160", 100),
        ("pct", ["--input", "rounds=2"], "160", 100),
        # Run 30 comes after the first slice (8 executions) came back: no other unit exists before it.
        ("dfs", ["--input", "workers=2", "--input", "rounds=4"], "5000", 30),
    ],
)
def test_a_ray_campaign_stopped_and_resumed_finds_what_the_uninterrupted_one_finds(
    strategy: str, inputs: list[str], budget: str, at: int, cluster: str, tmp_path: Path
) -> None:
    # Counting its runs is part of the target's behaviour (it touches files), so every campaign compared
    # counts them: the uninterrupted one towards a run it never reaches, the resumed one past the stop.
    target = f"{SLOW}:locked" if strategy == "dfs" else f"{SLOW}:racy"
    campaign = [*inputs, "--strategy", strategy, "--seed", "3", "--ray-address", cluster, "--workers", "2", "--budget", budget, "--keep-going"]
    outcomes = []
    try:
        for name in ("whole", "stopped"):
            directory = tmp_path / name
            directory.mkdir()
            _interrupted_in_its_run(directory, at if name == "stopped" else 10**9)
            if name == "stopped":
                state = directory / "traces" / "campaign.state"
                process = _ray_check(directory, target, *campaign)
                stdout, stderr = process.communicate(timeout=600)
                assert process.returncode == 130, stdout + stderr[-3000:]
                assert "--resume" in stderr and state.exists()
                if strategy == "dfs":
                    assert json.loads(state.read_text())["executions"] >= 8
                process = _ray_check(directory, target, *campaign, "--resume", str(directory / "traces"))
            else:
                process = _ray_check(directory, target, *campaign)
            stdout, stderr = process.communicate(timeout=600)
            assert process.returncode in (0, 1), stdout + stderr[-3000:]
            assert not (directory / "traces" / "campaign.state").exists()
            report = json.loads((directory / "report.json").read_text())
            bugs = sorted((bug["execution"], bug["kind"], bug["message"]) for bug in report["bugs"])
            verified = report["verified"] is not None and report["verified"]["executions"] == report["executions"]
            outcomes.append((process.returncode, report["executions"], bugs, verified))
    finally:
        INTERRUPT_CONTROL.unlink(missing_ok=True)
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][2] or outcomes[0][3]  # a bug found, or the dfs verified: there was something to compare
