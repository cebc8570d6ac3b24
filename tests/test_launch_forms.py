"""Programs checked as their users launch them (DESIGN §2): torchrun, python FILE.py, python -m, mp.spawn.

Each form runs through the real command on small scripts in the shape of
PyTorch's examples and tutorials and of Ray's and Python's own: a correct
one passes (exit 0), a buggy one is found (exit 1, the right kind) and its
trace, which records the command, replays it. What cannot be run is exit 2
with a message that names it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "launch_programs"
SRC = Path(__file__).resolve().parent.parent / "src"


def dnsse(*arguments: str, cwd: Path = PROGRAMS) -> subprocess.CompletedProcess:
    """The real command, from ``cwd`` (the programs' directory: commands name their files relative to it)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, cwd=cwd, env=env,
        timeout=600,
    )


def check(tmp_path: Path, *words: str, budget: int = 30) -> tuple[subprocess.CompletedProcess, dict | None]:
    """``dnsse check --budget N --out ... --json ... WORDS``: the run and its JSON report (None if not written)."""
    report = tmp_path / "report.json"
    done = dnsse("check", "--budget", str(budget), "--out", str(tmp_path / "out"), "--json", str(report), *words)
    return done, json.loads(report.read_text()) if report.exists() else None


def found(tmp_path: Path, kind: str, *words: str) -> dict:
    """Check WORDS, expect one bug of ``kind``, replay its trace from elsewhere; the JSON report."""
    done, report = check(tmp_path, *words)
    assert done.returncode == 1, done.stdout + done.stderr
    assert report is not None and report["bugs"][0]["kind"] == kind, report
    replayed = dnsse("replay", report["bugs"][0]["trace"], cwd=tmp_path)
    assert replayed.returncode == 1 and "reproduced:" in replayed.stdout, replayed.stdout + replayed.stderr
    return report


def passes(tmp_path: Path, *words: str, budget: int = 30) -> dict:
    done, report = check(tmp_path, *words, budget=budget)
    assert done.returncode == 0, done.stdout + done.stderr
    assert report is not None and report["bugs"] == [] and report["executions"] == budget, report
    return report


def refused(tmp_path: Path, *words: str) -> str:
    """Check WORDS, expect exit 2 with no traceback and no trace; what dnsse said."""
    done, _ = check(tmp_path, *words, budget=5)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not list((tmp_path / "out").glob("bug-*.json"))
    return done.stderr


TRAIN = ["torchrun", "--standalone", "--nproc-per-node", "2", "train_torchrun.py", "--epochs", "2"]


@pytest.mark.torch
def test_a_torchrun_script_passes_and_its_report_names_the_command(tmp_path: Path) -> None:
    report = passes(tmp_path, "--", *TRAIN)
    assert report["target"] == " ".join(TRAIN) and report["framework"] == "torch" and report["world_size"] == 2


@pytest.mark.slow
@pytest.mark.torch
def test_a_torchrun_script_s_hang_at_a_rank_0_only_barrier_is_found_and_replayed_from_another_directory(
    tmp_path: Path,
) -> None:
    report = found(tmp_path, "collective_mismatch", "--", *TRAIN, "--barrier-on-save")
    trace = json.loads(Path(report["bugs"][0]["trace"]).read_text())
    assert trace["target"] == " ".join([*TRAIN, "--barrier-on-save"])  # the command as given, paths relative
    assert trace["directory"] == str(PROGRAMS.resolve())


@pytest.mark.slow
@pytest.mark.torch
def test_nnodes_runs_every_node_s_ranks_with_node_local_numbering_and_argv_as_given(tmp_path: Path) -> None:
    out = tmp_path / "dumps"
    out.mkdir()
    passes(tmp_path, "--strategy", "random", "--", sys.executable, "-m", "torch.distributed.run", "--nnodes", "2",
           "--nproc-per-node", "2", "--node-rank", "1", "--max-restarts", "3", "--monitor-interval", "1",
           "dump_env.py", "--out", str(out), budget=1)
    ranks = {rank: json.loads((out / f"rank-{rank}.json").read_text()) for rank in range(4)}
    for rank, seen in ranks.items():
        env = seen["env"]
        assert seen["argv"] == ["dump_env.py", "--out", str(out)] and seen["name"] == "__main__"
        assert (env["RANK"], env["LOCAL_RANK"], env["GROUP_RANK"]) == (str(rank), str(rank % 2), str(rank // 2))
        assert (env["WORLD_SIZE"], env["LOCAL_WORLD_SIZE"], env["GROUP_WORLD_SIZE"]) == ("4", "2", "2")
        assert env["TORCHELASTIC_MAX_RESTARTS"] == "3" and env["MASTER_ADDR"] == "127.0.0.1"


@pytest.mark.slow
@pytest.mark.torch
def test_worker_processes_run_a_launch_command_and_its_trace_replays(tmp_path: Path) -> None:
    found(tmp_path, "collective_mismatch", "--workers", "2", "--", *TRAIN, "--barrier-on-save")


@pytest.mark.torch
def test_rank_environments_are_undone_after_every_execution(tmp_path: Path) -> None:
    from dnsse.campaign.config import CampaignConfig
    from dnsse.campaign.run import run_campaign

    before, argv = dict(os.environ), list(sys.argv)
    here = Path.cwd()
    os.chdir(PROGRAMS)
    try:
        result = run_campaign(CampaignConfig(target=" ".join(TRAIN), strategy="random", budget=3, out=tmp_path))
    finally:
        os.chdir(here)
    assert result.bugs == [] and result.executions == 3
    assert dict(os.environ) == before and sys.argv == argv


@pytest.mark.slow
@pytest.mark.torch
def test_a_package_module_under_torchrun_with_a_relative_import(tmp_path: Path) -> None:
    passes(tmp_path, "--", "torchrun", "--nproc-per-node", "3", "-m", "trainer.train", "--items", "7", budget=10)


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.parametrize("demo", ["all_reduce", "ring"])
def test_the_tutorials_mp_spawn_launcher_starts_the_ranks(demo: str, tmp_path: Path) -> None:
    passes(tmp_path, "spawn_tutorial.py", "--", "--world-size", "3", "--demo", demo)


@pytest.mark.slow
@pytest.mark.torch
def test_a_deadlock_among_the_ranks_mp_spawn_started_is_found_and_names_the_joining_launcher(tmp_path: Path) -> None:
    done, report = check(
        tmp_path, "--", "python", "spawn_tutorial.py", "--world-size", "3", "--demo", "ring-recv-first"
    )
    assert done.returncode == 1 and report is not None and report["bugs"][0]["kind"] == "deadlock", done.stdout
    assert "main waits for the ranks mp.spawn started (rank 0, rank 1, rank 2) to finish" in done.stdout
    assert dnsse("replay", report["bugs"][0]["trace"], cwd=tmp_path).returncode == 1


@pytest.mark.slow
@pytest.mark.torch
def test_the_ddp_tutorial_s_basic_demo_passes(tmp_path: Path) -> None:
    passes(tmp_path, "ddp_tutorial.py", budget=5)


@pytest.mark.slow
@pytest.mark.torch
def test_an_entry_function_that_spawns_its_ranks_and_an_exception_in_one_of_them(tmp_path: Path) -> None:
    passes(tmp_path / "a", "spawn_entry.py:main", budget=10)
    report = found(tmp_path / "b", "exception", "spawn_entry.py:main_failing_rank")
    assert "rank 1 failed after the all_reduce (3.0)" in report["bugs"][0]["message"]


@pytest.mark.slow
@pytest.mark.torch
def test_the_tutorial_s_one_mp_process_per_rank_launcher_passes_and_its_p2p_deadlock_is_found(tmp_path: Path) -> None:
    passes(tmp_path / "a", "process_tutorial.py", "--strategy", "random", budget=60)
    found(tmp_path / "b", "deadlock", "process_tutorial.py", "--", "--recv-first")


@pytest.mark.slow
@pytest.mark.torch
def test_an_mp_process_that_is_no_rank_s_stays_refused(tmp_path: Path) -> None:
    program = tmp_path / "other.py"
    program.write_text(
        "import multiprocessing as mp\nimport torch.distributed\n\n\ndef work(name):\n    pass\n\n\n"
        "if __name__ == '__main__':\n    p = mp.Process(target=work, args=('x',))\n    p.start()\n    p.join()\n"
    )
    said = refused(tmp_path, str(program))
    assert "multiprocessing (a new process started by Process.start" in said and "other.py:11" in said


@pytest.mark.slow
def test_a_ray_script_s_main_block_is_its_driver(tmp_path: Path) -> None:
    passes(tmp_path / "a", "ray_driver.py")
    report = found(tmp_path / "b", "exception", "ray_driver.py", "--", "--max-concurrency", "2")
    assert "lost an increment" in report["bugs"][0]["message"] and report["framework"] == "ray"


@pytest.mark.slow
def test_a_threads_script_runs_as_main_with_its_arguments(tmp_path: Path) -> None:
    passes(tmp_path / "a", "threads_counter.py", "--", "--workers", "3")
    report = found(tmp_path / "b", "exception", "--", "python3", "-u", "threads_counter.py", "--no-lock")
    assert report["target"] == "python3 -u threads_counter.py --no-lock"


@pytest.mark.torch
@pytest.mark.parametrize(
    ("words", "said"),
    [
        pytest.param(
            ["--", "torchrun", "--nproc_per_node=2", "train_torchrun.py", "--epochz", "2"],
            "the program rejected its command-line arguments (train_torchrun.py: error: unrecognized arguments: "
            "--epochz 2)",
            marks=pytest.mark.slow,
        ),
        (["--", "torchrun", "--nnodes", "1:2", "train_torchrun.py"], "torchrun's option --nnodes 1:2 is not supported"),
        (["--", "torchrun", "--no-python", "train_torchrun.py"], "torchrun's option --no-python is not supported"),
        pytest.param(
            ["--", "torchrun", "--bogus", "2", "train_torchrun.py"],
            "unrecognized arguments: --bogus",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            ["--", "torchrun", "--nproc-per-node", "2", "missing.py"],
            "the program file missing.py does not exist",
            marks=pytest.mark.slow,
        ),
        (["missing.py"], "the program file missing.py does not exist"),
        pytest.param(
            ["--", "bash", "run.sh"],
            "'bash' is neither",
            marks=pytest.mark.slow,
        ),
        (["--"], "give the program to check"),
        pytest.param(
            ["spawn_entry.py:main", "--", "--x"],
            "an entry function, which takes no command-line arguments",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            ["--", "python", "-m", "no_such_module"],
            "no module 'no_such_module' under",
            marks=pytest.mark.slow,
        ),
        (["--world-size", "3", "--", "torchrun", "--nproc-per-node", "2", "train_torchrun.py"],
         "--world-size 3 disagrees with the torchrun command, which starts 2 ranks"),
    ],
)
def test_what_cannot_be_run_is_exit_2_naming_it(words: list[str], said: str, tmp_path: Path) -> None:
    assert said in refused(tmp_path, *words)


@pytest.mark.slow
@pytest.mark.torch
def test_a_torchrun_script_run_with_plain_python_is_told_to_use_torchrun(tmp_path: Path) -> None:
    said = refused(tmp_path, "train_torchrun.py")
    assert "torch.distributed.init_process_group was called by the process that launches the program" in said
    assert "train_torchrun.py:16" in said and "-- torchrun --nproc-per-node N FILE.py ARGS" in said


# What differs between two runs of torchrun whatever the program: a fresh port, run id, error-file directory.
_DIFFER = {"MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_ERROR_FILE"}


@pytest.mark.gloo
@pytest.mark.torch
def test_each_rank_s_environment_and_argv_are_those_a_real_torchrun_gives(tmp_path: Path) -> None:
    real, controlled = tmp_path / "real", tmp_path / "controlled"
    real.mkdir()
    controlled.mkdir()
    command = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "dump_env.py", "--x", "1"]
    try:
        # The environment given explicitly, as dnsse's is: a C library may have set variables that
        # os.environ does not show, and a child started without env= would inherit them.
        ran = subprocess.run([sys.executable, *command, "--out", str(real)], cwd=PROGRAMS, capture_output=True,
                             text=True, timeout=600, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        pytest.skip("torchrun did not finish here within 600 s")
    if ran.returncode != 0 or len(list(real.glob("rank-*.json"))) != 2:
        pytest.skip(f"torchrun could not start its workers here: {ran.stderr[-500:]}")
    passes(tmp_path, "--strategy", "random", "--", "python", *command, "--out", str(controlled), budget=1)
    outside = dict(os.environ)
    for rank in (0, 1):
        mine = json.loads((controlled / f"rank-{rank}.json").read_text())
        theirs = json.loads((real / f"rank-{rank}.json").read_text())
        assert mine["argv"][:3] == theirs["argv"][:3] == ["dump_env.py", "--x", "1"]
        assert (mine["name"], mine["file"]) == (theirs["name"], theirs["file"])
        # What torchrun added to the environment it was started in, and what dnsse's rank sees added.
        added = {k: v for k, v in theirs["env"].items() if outside.get(k) != v}
        seen = {k: mine["env"].get(k) for k in added}
        assert {k: v for k, v in seen.items() if k not in _DIFFER} == {
            k: v for k, v in added.items() if k not in _DIFFER
        }
        assert all(mine["env"].get(k) for k in _DIFFER)
        suffix = f"attempt_0/{rank}/error.json"
        assert theirs["env"]["TORCHELASTIC_ERROR_FILE"].endswith(suffix)
        assert mine["env"]["TORCHELASTIC_ERROR_FILE"].endswith(suffix)
