"""What the terminal shows: the program's output captured, quiet/verbose, and the story of a bug."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from dnsse.engine.choices import ReplayChooser
from dnsse.engine.runner import run_execution
from dnsse.report.progress import ProgressLine
from dnsse.report.story import tell
from dnsse.report.story_text import story_lines
from dnsse.campaign.trace import read_trace
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.loading import load, preflight
from dnsse.campaign.run import run_campaign
from dnsse.campaign.control import CampaignControl

PROGRAMS = Path(__file__).parent / "programs"
PRINTS = f"{PROGRAMS}/report_prints.py:main"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600
    )


def check_prints(tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    # random finds the lost update after a few passing runs that print too.
    return run_cli("check", PRINTS, "--strategy", "random", "--out", str(tmp_path / "traces"), *options)


def test_output_of_the_program_is_shown_only_for_the_bugs_run_and_labelled_by_agent(tmp_path: Path) -> None:
    found = check_prints(tmp_path)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "found a bug in execution" in found.stdout
    # Three executions printed, and minimization ran more: only the bug's run is shown.
    assert found.stdout.count("hello from worker-0") == 1
    assert "[Thread-1 (worker)] hello from worker-0" in found.stdout
    assert "[Thread-2 (worker), stderr] worker-1 wrote 1" in found.stdout
    assert "[main] <b>final count</b> 1" in found.stdout
    assert "hello" not in found.stderr


def test_show_output_lets_every_executions_prints_through(tmp_path: Path) -> None:
    found = check_prints(tmp_path, "--show-output", "--no-minimize")
    assert found.returncode == 1
    raw = [line for line in found.stdout.splitlines() if line == "hello from worker-0"]
    assert len(raw) >= 3  # one per execution, unlabelled, as the program wrote it
    assert found.stderr.count("wrote") >= 6


def test_quiet_prints_only_the_bug_its_trace_and_its_replay_command(tmp_path: Path) -> None:
    found = check_prints(tmp_path, "--quiet")
    assert found.returncode == 1
    lines = found.stdout.splitlines()
    assert lines == [
        "exception: AssertionError: lost update: count is 1",
        f"trace:  {tmp_path / 'traces' / 'bug-1.json'}",
        f"replay: dnsse replay {tmp_path / 'traces' / 'bug-1.json'}",
    ]


def test_quiet_prints_nothing_for_a_correct_program(tmp_path: Path) -> None:
    passed = run_cli("check", f"{PROGRAMS}/report_prints.py:correct", "--budget", "5", "-q", "--out", str(tmp_path))
    assert passed.returncode == 0 and passed.stdout == ""


def test_verbose_prints_one_line_per_execution(tmp_path: Path) -> None:
    found = check_prints(tmp_path, "--verbose")
    assert "execution 1: passed" in found.stdout and "execution 2: passed" in found.stdout
    assert "execution 6: exception: AssertionError: lost update: count is 1" in found.stdout


def test_quiet_and_verbose_together_are_refused(tmp_path: Path) -> None:
    refused = check_prints(tmp_path, "--quiet", "--verbose")
    assert refused.returncode == 2 and "not allowed with" in refused.stderr


def test_the_story_shows_the_preemption_the_lost_update_needs_and_the_failing_line(tmp_path: Path) -> None:
    found = check_prints(tmp_path)
    story = found.stdout
    assert "1 step where the schedule preempted the default agent" in story
    # The reader sees: thread 1 read, was preempted, thread 2 read and wrote, thread 1 wrote.
    assert re.search(r"⏸ step +\d+  preempted: Thread-2 \(worker\) runs", story)
    assert "start  <- runs before Thread-1 (worker)" in story
    assert "report_prints.py:17  seen = counter.count" in story
    assert "report_prints.py:18  counter.count = seen + 1" in story
    failing = next(line for line in story.splitlines() if "✗ step" in line)
    assert "report_prints.py:28" in failing and "assert counter.count == 2" in failing


def test_the_story_counts_as_many_switches_as_the_minimized_trace_has_non_default_choices(tmp_path: Path) -> None:
    check_prints(tmp_path)
    trace_path = tmp_path / "traces" / "bug-1.json"
    story = tell(trace_path)
    assert story.reproduced and story.bug is not None and story.bug.kind == "exception"
    assert story.lanes == ["main", "Thread-1 (worker)", "Thread-2 (worker)"]
    # Brute force: count the answers that differ from "let the current agent go on".
    trace = read_trace(trace_path)
    target, framework = load(trace.target, trace.framework, trace.world_size)
    deviations = []

    class Counting(ReplayChooser):
        def next_agent(self, runnable, current, step):  # type: ignore[no-untyped-def]
            index = super().next_agent(runnable, current, step)
            if index != (runnable.index(current) if current in runnable else 0):
                deviations.append(step)
            return index

    with framework.activate():
        preflight(target, framework)
        run_execution(target, framework, Counting(trace.choices), trace.limits)
    assert [step.step for step in story.steps if step.switched_from is not None] == deviations
    assert story.switches == 1


def test_replay_shows_the_whole_output_and_the_story(tmp_path: Path) -> None:
    check_prints(tmp_path)
    replayed = run_cli("replay", str(tmp_path / "traces" / "bug-1.json"))
    assert replayed.returncode == 1
    out = replayed.stdout
    assert out.index("what the program printed") < out.index("reproduced:") < out.index("how it happens")
    assert "[Thread-1 (worker)] hello from worker-0" in out and "✗ step" in out


def test_the_torch_story_puts_async_steps_under_the_rank_that_issued_them(tmp_path: Path) -> None:
    program = Path(__file__).resolve().parent / "programs" / "torch_async.py"
    found = run_cli("check", f"{program}:modifies_before_wait", "--out", str(tmp_path))
    lines = story_lines(tell(tmp_path / "bug-1.json"))
    broken = next(line for line in lines if line.startswith("  ✗ step"))
    rank = "rank 1" if "reads rank 1" in broken else "rank 0"
    assert broken.endswith(f"async: all_reduce reads {rank}")
    # The step sits in the issuing rank's lane, after the issue.
    lane = lines[lines.index(next(line for line in lines if line.startswith(f"  {rank} ("))) :]
    assert lane.index(broken) > next(i for i, line in enumerate(lane) if "all_reduce #1 of WORLD" in line)
    assert found.returncode == 1


def test_progress_line_shows_rate_bugs_elapsed_and_time_left() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    progress = ProgressLine(console, budget=100, time_budget=None)
    progress.update(10, bug=False, recorder=None)
    progress.bugs = 1
    text = progress._render().plain
    progress.close()
    assert text.startswith("dnsse exploring: 10/100 executions · ")
    assert "/s" in text and "1 bug" in text and "elapsed" in text and "left" in text
    rate = 10 / 2.0
    assert progress.time_left(elapsed=2.0, rate=rate) == 90 / rate


def test_progress_line_says_the_phase_and_fits_an_80_column_terminal() -> None:
    output = io.StringIO()
    console = Console(file=output, force_terminal=True, width=80)
    progress = ProgressLine(console, budget=10**8, time_budget=86_400.0)
    progress.update(123_456_789, bug=False, recorder=None)
    progress.coverage = "1234/5678 branches"
    progress.show_phase("minimizing")
    line = progress._render()
    progress.close()
    assert line.plain.startswith("dnsse minimizing: ")
    measured = io.StringIO()
    Console(file=measured, width=80, force_terminal=False).print(line)
    drawn = measured.getvalue().rstrip("\n").splitlines()
    assert len(drawn) == 1 and len(drawn[0]) <= 80 and drawn[0].endswith("…")


def test_a_campaign_tells_when_it_minimizes_and_confirms_a_bug(tmp_path: Path) -> None:
    phases: list[str] = []
    config = CampaignConfig(target=f"{PROGRAMS}/report_prints.py:main", strategy="random", out=tmp_path)
    result = run_campaign(config, control=CampaignControl(tmp_path, saving=False, on_phase=phases.append))
    assert result.bugs and phases == ["minimizing", "confirming", "exploring"]


def test_no_progress_line_when_stdout_is_not_a_terminal() -> None:
    assert ProgressLine.on_terminal(100, None) is None  # pytest captures stdout
