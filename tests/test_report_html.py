"""The HTML page of a campaign: self-contained, escaped, one lane per agent, arrows; and it loads in Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.report.story import tell
from dnsse.report.timeline import arrows

PROGRAMS = Path(__file__).parent / "programs"
PIPELINE = f"{PROGRAMS}/report_pipeline.py:main"
PRODCONS = f"{PROGRAMS}/story_prodcons.py:main"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def run_cli(*arguments: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600, cwd=cwd
    )


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("pipeline")
    found = run_cli("check", PIPELINE, "--out", str(directory), "--html", str(directory / "page.html"), "-q")
    assert found.returncode == 1, found.stdout + found.stderr
    return directory


def test_the_page_has_one_lane_per_agent_and_marks_the_failing_step(pipeline: Path) -> None:
    page = (pipeline / "page.html").read_text()
    assert re.findall(r'<g class="lane" data-lane="([^"]+)"', page) == ["rank 0", "rank 1"]
    (failing,) = re.findall(r'<rect class="step [a-z]+ failing" data-step="(\d+)"', page)
    assert int(failing) == tell(pipeline / "bug-1.json").bug.step == 9


def test_arrows_join_the_message_and_the_collective_across_lanes(pipeline: Path) -> None:
    story = tell(pipeline / "bug-1.json")
    drawn = {(arrow.kind, arrow.source[0], arrow.target[0]) for arrow in arrows(story) if arrow.kind != "race"}
    assert drawn == {("message", "rank 0", "rank 1"), ("collective", "rank 1", "rank 0")}
    (message,) = [arrow for arrow in arrows(story) if arrow.kind == "message"]
    send = next(e for e in story.events if e.name == "send")
    recv = next(e for e in story.events if e.name == "recv")
    assert (message.source[1], message.target[1]) == (send.step, recv.step)


def test_ray_calls_are_arrows_from_caller_to_actor(tmp_path: Path) -> None:
    run_cli("check", f"{PROGRAMS}/ray_mutual.py:deadlock", "--out", str(tmp_path), "-q")
    story = tell(tmp_path / "bug-1.json")
    calls = [arrow for arrow in arrows(story) if arrow.kind == "call"]
    assert calls and all(arrow.source[0] != arrow.target[0] for arrow in calls)
    assert {arrow.source[0] for arrow in calls} & {"driver"}


def test_everything_from_the_program_is_escaped_and_nothing_is_fetched(pipeline: Path) -> None:
    page = (pipeline / "page.html").read_text()
    assert "<img" not in page and "</pre><img" not in page
    assert "&lt;rank 0&gt; got 1.0 &lt;/pre&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert not re.search(r"<[^>]*\s(src|href)=", page)  # no attribute that loads anything
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert len(re.findall(r"<script", page)) == 1


def test_the_page_shows_inputs_coverage_and_each_strategys_contribution(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parent.parent / "examples" / "loss_scaling.py"
    run_cli(
        "check", f"{example}:main", "--strategy", "pct", "--out", str(tmp_path), "--coverage",
        "--html", str(tmp_path / "p.html"), "-q",
    )
    page = (tmp_path / "p.html").read_text()
    assert "<code>steps=4</code>" in page
    assert re.search(r"<b>\d+(\.\d+)?%</b>branch coverage", page)
    assert re.search(r"<tr><td>pct</td><td>1</td><td>1</td><td>1</td><td>\d+</td></tr>", page)


def test_report_draws_the_page_of_a_finished_campaign(pipeline: Path, tmp_path: Path) -> None:
    drawn = run_cli("report", str(pipeline), "--html", str(tmp_path / "later.html"), cwd=tmp_path)
    assert drawn.returncode == 0, drawn.stderr
    later = (tmp_path / "later.html").read_text()
    assert re.findall(r'<g class="lane" data-lane="([^"]+)"', later) == ["rank 0", "rank 1"]
    assert "collective_mismatch" in later


def test_report_of_a_directory_without_a_campaign_is_bad_input(tmp_path: Path) -> None:
    refused = run_cli("report", str(tmp_path))
    assert refused.returncode == 2 and "no finished campaign" in refused.stderr and "Traceback" not in refused.stderr


def _in_chromium(page: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess, list[str], Path]:
    """The page loaded by headless Chromium: the run, the console lines it logged, its screenshot."""
    screenshot = tmp_path / "report.png"
    loaded = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
            "--window-size=1400,1000", f"--screenshot={screenshot}", page.as_uri(),
        ],
        capture_output=True, text=True, timeout=600,
    )
    return loaded, [line for line in loaded.stderr.splitlines() if "CONSOLE" in line], screenshot


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)")
def test_the_page_loads_in_headless_chromium_without_console_errors(pipeline: Path, tmp_path: Path) -> None:
    loaded, console, screenshot = _in_chromium(pipeline / "page.html", tmp_path)
    # The page's own script counted what it drew once laid out, and nothing else was logged.
    assert any('"dnsse report: 2 lanes, 1 race arrows, 0 clipped"' in line for line in console), loaded.stderr[-2000:]
    assert not [line for line in console if "dnsse report:" not in line]
    assert not re.search(r"Uncaught|Refused to|Content Security Policy", loaded.stderr)
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 10_000


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)")
def test_a_missed_notify_draws_its_race_arrow_and_clips_no_text_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    found = run_cli("check", PRODCONS, "--out", str(tmp_path / "traces"), "--html", str(page), "-q")
    assert found.returncode == 1, found.stdout + found.stderr
    loaded, console, _ = _in_chromium(page, tmp_path)
    # The consumer's racy read and the producer's write are joined by one dashed red arrow, as laid out.
    assert any("race arrows, 0 clipped" in line and " 0 race arrows" not in line for line in console), (
        loaded.stderr[-2000:]
    )
    assert not re.search(r"Uncaught|Refused to|Content Security Policy", loaded.stderr)


def test_the_pause_sign_is_one_common_fonts_have(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    found = run_cli("check", PRODCONS, "--out", str(tmp_path / "traces"), "--html", str(page), "-q")
    assert found.returncode == 1, found.stdout + found.stderr
    html = page.read_text(encoding="utf-8")
    assert "\u2016 step" in html and "\u23f8" not in html
