"""Known failures: a check first replays the bugs earlier checks of its target found, as Hypothesis's database does."""

from __future__ import annotations

import json
from pathlib import Path

from dnsse.cli import main

RACY = (Path(__file__).parent / "programs" / "lost_update_box.py").read_text()
FIXED = RACY.replace("import threading\n", "import threading\n\nLOCK = threading.Lock()\n").replace(
    "        value = box[0]\n        box[0] = value + 1\n", "        with LOCK:\n            box[0] += 1\n"
)


def _check(tmp_path: Path, *extra: str) -> tuple[int, dict]:
    report = tmp_path / "report.json"
    status = main(["check", f"{tmp_path / 'racy.py'}:main", "--out", str(tmp_path / "out"), "--json", str(report), *extra])
    return status, json.loads(report.read_text())


def test_a_bug_found_once_is_replayed_first_by_the_next_check_and_dropped_once_fixed(tmp_path: Path, capsys) -> None:
    (tmp_path / "racy.py").write_text(RACY)
    status, first = _check(tmp_path)
    assert status == 1 and first["executions"] >= 1 and first["known_failures"] is None
    assert len(list((tmp_path / "out" / "known").rglob("*.json"))) == 1
    capsys.readouterr()
    # Again: the known failure comes back before any search.
    status, second = _check(tmp_path)
    out = capsys.readouterr().out
    assert status == 1 and second["executions"] == 0
    assert second["known_failures"] == {"replayed": 1, "still_failing": 1, "dropped": 0}
    assert [bug["execution"] for bug in second["bugs"]] == [0] and "lost update: 1" in second["bugs"][0]["message"]
    assert "found a bug again: a known failure, replayed first" in out and "1 replayed first, 1 still fails" in out
    assert main(["replay", second["bugs"][0]["trace"]]) == 1
    capsys.readouterr()
    # Fixed: the known trace no longer shows its bug; it is dropped and the search finds nothing.
    (tmp_path / "racy.py").write_text(FIXED)
    status, third = _check(tmp_path, "--budget", "30")
    assert status == 0 and third["executions"] == 30
    assert third["known_failures"] == {"replayed": 1, "still_failing": 0, "dropped": 1}
    assert not list((tmp_path / "out" / "known").rglob("*.json"))


def test_no_db_neither_replays_nor_keeps(tmp_path: Path, capsys) -> None:
    (tmp_path / "racy.py").write_text(RACY)
    assert _check(tmp_path)[0] == 1
    status, again = _check(tmp_path, "--no-db")
    assert status == 1 and again["known_failures"] is None and again["bugs"][0]["execution"] >= 1
    (tmp_path / "out" / "known").rename(tmp_path / "kept")
    assert _check(tmp_path, "--no-db")[0] == 1
    assert not (tmp_path / "out" / "known").exists()


def test_keep_going_replays_the_known_failure_and_still_searches(tmp_path: Path, capsys) -> None:
    (tmp_path / "racy.py").write_text(RACY)
    assert _check(tmp_path)[0] == 1
    status, report = _check(tmp_path, "--keep-going", "--budget", "20")
    assert status == 1 and report["executions"] == 20
    # The search met the same bug again: one bug, counted, not a second report.
    assert len(report["bugs"]) == 1 and report["bugs"][0]["execution"] == 0 and report["bugs"][0]["hits"] > 1


def test_a_crash_is_not_kept_since_replaying_it_first_would_kill_the_check(tmp_path: Path, capsys) -> None:
    (tmp_path / "racy.py").write_text("import os\n\n\ndef main():\n    os._exit(7)\n")
    status, report = _check(tmp_path)
    assert status == 1 and report["bugs"][0]["kind"] == "crash"
    assert not (tmp_path / "out" / "known").exists()
