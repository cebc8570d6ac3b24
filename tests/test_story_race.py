"""A bug's story tells the race: the decisive steps of both sides, in time order, by the program's names.

Each program below has one known bug; its story must say what went wrong in
one sentence, list the steps that decide it with their source lines and
values, and draw the same pair in the HTML timeline and SARIF code flow. The
values are checked against what plain Python computes for the same schedule.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.report.race import find_race
from dnsse.report.story import Story, tell
from dnsse.report.timeline import arrows

PROGRAMS = Path(__file__).parent / "programs"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600)


def line_of(program: str, code: str) -> int:
    """The line number of the first line of ``program`` whose text is ``code``."""
    lines = (PROGRAMS / program).read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if text.strip() == code)


def found(directory: Path, target: str, *options: str) -> subprocess.CompletedProcess:
    result = run_cli("check", f"{PROGRAMS}/{target}", "--out", str(directory), "--html",
                     str(directory / "page.html"), "--sarif", str(directory / "report.sarif"), *options)
    assert result.returncode == 1, result.stdout + result.stderr
    return result


def lines_of(story: Story) -> list[int]:
    race = find_race(story)
    assert race is not None
    return [int(step.location.rpartition(":")[2]) for step in race.steps if step.location is not None]


@pytest.fixture(scope="module")
def prodcons(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    directory = tmp_path_factory.mktemp("prodcons")
    return directory, found(directory, "story_prodcons.py:main")


@pytest.fixture(scope="module")
def ray_counter(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    directory = tmp_path_factory.mktemp("ray_counter")
    return directory, found(directory, "story_ray_counter.py:main")


@pytest.fixture(scope="module")
def collective(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    directory = tmp_path_factory.mktemp("collective")
    return directory, found(directory, "story_collective.py:main", "--world-size", "2")


# ---------------------------------------------------------------- a missed notify (threading.Condition)


def test_the_missed_notify_names_the_racy_check_the_append_the_notify_and_the_wait(prodcons) -> None:
    directory, _ = prodcons
    story = tell(directory / "bug-1.json")
    race = find_race(story)
    assert story.bug is not None and story.bug.kind == "deadlock"
    assert race is not None
    assert [step.lane for step in race.steps] == ["consumer", "producer", "producer", "consumer"]
    assert [step.step for step in race.steps] == sorted(step.step for step in race.steps)
    program = "story_prodcons.py"
    assert lines_of(story) == [line_of(program, "if not self.items:"), line_of(program, "self.items.append(item)"),
                               line_of(program, "self.ready.notify()"), line_of(program, "self.ready.wait()")]
    # The values are what Python gives: the list was empty when read, holds the one item once appended.
    read, append, _, _ = race.steps
    assert read.detail == "reads self.items of Box#1 = []"
    assert append.detail == "writes self.items of Box#1 (now [1])"
    assert race.sentence.startswith("consumer read self.items of Box#1 ([]) at ")
    assert "then producer wrote it (to [1]) at :17 and notified Condition#1 at :18" in race.sentence
    assert race.sentence.endswith("before consumer waited at :23: the notify was lost")


def test_the_terminal_says_what_went_wrong_before_the_per_agent_story(prodcons) -> None:
    _, result = prodcons
    out = result.stdout
    assert out.index("what went wrong: consumer read self.items of Box#1") < out.index("how it happens")
    decisive = out[out.index("what went wrong"): out.index("how it happens")]
    steps = [int(number) for number in re.findall(r"^\s+step\s+(\d+)", decisive, re.MULTILINE)]
    assert len(steps) == 4 and steps == sorted(steps)
    assert "if not self.items:" in decisive and "self.ready.wait()" in decisive


def test_the_html_timeline_draws_an_arrow_between_the_racing_steps(prodcons) -> None:
    directory, _ = prodcons
    page = (directory / "page.html").read_text()
    story = tell(directory / "bug-1.json")
    race = find_race(story)
    assert race is not None
    drawn = set(re.findall(r'<line class="arrow race"[^>]*data-from="(\d+)" data-to="(\d+)"', page))
    assert drawn == {(str(before.step), str(after.step)) for before, after in race.pairs}
    assert {(arrow.source, arrow.target) for arrow in arrows(story) if arrow.kind == "race"} == {
        ((before.lane, before.step), (after.lane, after.step)) for before, after in race.pairs
    }
    assert "What went wrong:</b> consumer read self.items of Box#1" in page
    assert len(re.findall(r'data-decisive="true"', page)) == len(race.steps)


def test_sarif_code_flow_holds_both_sides_of_the_race(prodcons) -> None:
    directory, _ = prodcons
    (result,) = json.loads((directory / "report.sarif").read_text())["runs"][0]["results"]
    flow = result["codeFlows"][0]
    assert flow["message"]["text"].endswith("the notify was lost")
    sides = {thread["id"]: [place["location"]["physicalLocation"]["region"]["startLine"]
                            for place in thread["locations"]] for thread in flow["threadFlows"]}
    assert sides == {"consumer": [21, 23], "producer": [17, 18]}
    assert "What went wrong: consumer read self.items of Box#1" in result["message"]["text"]


def test_the_missed_notify_replays(prodcons) -> None:
    directory, _ = prodcons
    replayed = run_cli("replay", str(directory / "bug-1.json"))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "what went wrong: consumer read self.items of Box#1" in replayed.stdout


# ---------------------------------------------------------------- a lost update through a sync Ray actor


def test_actor_calls_show_the_callers_line_arguments_and_return_values(ray_counter) -> None:
    directory, _ = ray_counter
    story = tell(directory / "bug-1.json")
    program = "story_ray_counter.py"
    calls = [step for step in story.steps if step.operation == "actor.call"]
    described = [(step.detail, int(step.location.rpartition(":")[2])) for step in calls if step.location]
    get_line, set_line = line_of(program, "value = ray.get(counter.get.remote())"), line_of(
        program, "ray.get(counter.set.remote(value + 1))")
    check_line = line_of(program, 'assert ray.get(counter.get.remote()) == 2, "an increment was lost"')
    # Both gets ran before either set: both saw 0, both set 1, and the driver reads 1, as plain Python would.
    assert described == [
        ("Counter#1.get() -> 0 (call #3) runs (called by increment#1)", get_line),
        ("Counter#1.get() -> 0 (call #4) runs (called by increment#2)", get_line),
        ("Counter#1.set(1) (call #5) runs (called by increment#1)", set_line),
        ("Counter#1.set(1) (call #6) runs (called by increment#2)", set_line),
        ("Counter#1.get() -> 1 (call #7) runs (called by driver)", check_line),
    ]


def test_the_ray_lost_update_names_the_interleaved_calls_in_time_order(ray_counter) -> None:
    directory, result = ray_counter
    race = find_race(tell(directory / "bug-1.json"))
    assert race is not None
    assert race.sentence.startswith("increment#1 called Counter#1.get() -> 0 at ")
    assert "then increment#2 called Counter#1.get() -> 0 at :20 before increment#1 called Counter#1.set(1) at :21" \
        in race.sentence
    assert [step.step for step in race.steps] == sorted(step.step for step in race.steps)
    assert "what went wrong: increment#1 called Counter#1.get() -> 0" in result.stdout
    replayed = run_cli("replay", str(directory / "bug-1.json"))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr


# ---------------------------------------------------------------- a collective mismatch of two ranks


def test_the_mismatch_names_both_ranks_collectives_with_their_lines(collective) -> None:
    directory, result = collective
    story = tell(directory / "bug-1.json")
    race = find_race(story)
    assert race is not None and story.bug is not None and story.bug.kind == "collective_mismatch"
    program = "story_collective.py"
    by_lane = {step.lane: step for step in race.steps}
    assert set(by_lane) == {"rank 0", "rank 1"}
    assert int(by_lane["rank 0"].location.rpartition(":")[2]) == line_of(program, "dist.barrier()")
    assert int(by_lane["rank 1"].location.rpartition(":")[2]) == line_of(program, "dist.broadcast(loss, src=0)")
    assert by_lane["rank 0"].detail == "barrier #2 of WORLD" and by_lane["rank 1"].detail == "broadcast #2 of WORLD"
    assert race.sentence.endswith("the ranks disagree on that collective")
    assert "what went wrong: rank" in result.stdout
    replayed = run_cli("replay", str(directory / "bug-1.json"))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr


# ---------------------------------------------------------------- a lost update of plain threads


def test_a_lost_update_names_the_attribute_as_the_program_does(tmp_path: Path) -> None:
    result = run_cli("check", f"{PROGRAMS}/threads_counter.py:unlocked", "--out", str(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    race = find_race(tell(tmp_path / "bug-1.json"))
    assert race is not None
    read, write, write_back = race.steps
    assert read.lane == write_back.lane != write.lane
    assert read.step < write.step < write_back.step
    # The reader's stale value plus one is what it wrote back, the same value the other thread wrote.
    seen = int(read.touches[0].value)
    assert read.touches[0].label == "self.count of Counter#1"
    assert write.touches[0].value == write_back.touches[0].value == str(seen + 1)
    assert race.sentence.endswith("'s write was lost")


# ---------------------------------------------------------------- two sends racing for a receive from any source


def test_two_sends_racing_for_an_any_source_receive_are_both_named(tmp_path: Path) -> None:
    result = run_cli("check", f"{PROGRAMS}/dpor_torch.py:parameter_server_any_payload", "--world-size", "3",
                     "--out", str(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    story = tell(tmp_path / "bug-1.json")
    race = find_race(story)
    assert race is not None
    sends = [step for step in race.steps if step.detail.startswith("send to 0")]
    assert {step.lane for step in sends} == {"rank 1", "rank 2"}
    assert [step.step for step in race.steps] == sorted(step.step for step in race.steps)
    receive = race.steps[0]
    assert receive.lane == "rank 0" and receive.detail.startswith("recv from any")
    taken = next(event for event in story.events if event.name == "recv")
    # The sentence names the sender whose message the receive really took.
    assert f"took rank {taken.fields['src']}'s message" in race.sentence
    assert all(after.lane == "rank 0" and before.lane != "rank 0" for before, after in race.pairs)


# ---------------------------------------------------------------- values, as a story shows them


def test_values_are_shown_short_and_without_running_the_programs_repr() -> None:
    from dnsse.engine.value_text import call_text, value_text

    class Loud:
        def __repr__(self) -> str:
            raise AssertionError("a story must not run the program's __repr__")

    assert value_text([]) == "[]" and value_text([1, 2]) == "[1, 2]" and value_text((1,)) == "(1,)"
    assert value_text(list(range(10))) == "[0, 1, 2, 3, ...]"
    assert value_text([Loud()]) == "[<Loud>]" and value_text(Loud()) == "<Loud>"
    assert len(value_text({"key": "x" * 100})) <= 40
    assert call_text((1, "a"), {"retries": 2}) == "(1, 'a', retries=2)"
