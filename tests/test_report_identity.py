"""What the reports say about themselves and their bugs: SARIF's project and rules, the --json
report's version, seed and bug locations, and one bug once under --keep-going."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import dnsse
from dnsse.cli import main
from dnsse.engine.bugs import Bug, BugKind
from dnsse.search.bug_family import bug_family

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).parent / "programs"

MISMATCH = """\
import torch
import torch.distributed as dist


def main(rank, world_size):
    grads = torch.ones(4)
    if rank == 0:
        dist.all_reduce(grads)
    dist.barrier()
"""


def test_the_project_uri_is_the_one_the_package_declares() -> None:
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Homepage"] == dnsse.PROJECT_URI
    assert urls["Issues"] == dnsse.ISSUES_URI


def test_sarif_names_the_project_and_has_a_rule_for_every_kind(tmp_path: Path, capsys) -> None:
    sarif = tmp_path / "r.sarif"
    status = main(
        ["check", f"{PROGRAMS}/threads_lock_order.py:main", "--out", str(tmp_path / "o"), "--sarif", str(sarif)],
        contained=False,
    )
    assert status == 1
    driver = json.loads(sarif.read_text())["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == dnsse.PROJECT_URI
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert set(rules) == set(BugKind.ALL)
    for kind in ("crash", "hang", "timeout", "deadlock"):
        assert rules[kind]["shortDescription"]["text"] != kind
        assert rules[kind]["helpUri"].startswith(dnsse.PROJECT_URI)


def test_json_report_has_version_seed_and_where_each_bug_broke(tmp_path: Path, capsys) -> None:
    report = tmp_path / "r.json"
    status = main(
        ["check", f"{PROGRAMS}/threads_counter.py:unlocked", "--out", str(tmp_path / "o"), "--json", str(report),
         "--seed", "7", "--strategy", "random"], contained=False
    )
    assert status == 1
    data = json.loads(report.read_text())
    assert data["version"] == dnsse.__version__ and data["seed"] == 7
    bug = data["bugs"][0]
    assert bug["location"]["path"].endswith("threads_counter.py")
    source = (PROGRAMS / "threads_counter.py").read_text().splitlines()
    # An exception's location is its raising line: the failed assert.
    assert "assert" in source[bug["location"]["line"] - 1]
    assert bug["hits"] == 1


def test_a_mismatch_seen_with_the_ranks_in_either_order_is_one_bug() -> None:
    one = Bug(
        "collective_mismatch",
        "ranks 1 and 0 issued different collectives as #1 of WORLD: barrier() on rank 1, "
        "all_reduce(float32[4], op=SUM) on rank 0",
    )
    other = Bug(
        "collective_mismatch",
        "ranks 0 and 1 issued different collectives as #1 of WORLD: all_reduce(float32[4], op=SUM) on rank 0, "
        "barrier() on rank 1",
    )
    assert bug_family(one) == bug_family(other)
    # Another position of the group, or other values, is another bug.
    assert bug_family(one) != bug_family(Bug(one.kind, one.message.replace("#1 of", "#2 of")))
    assert bug_family(Bug("exception", "AssertionError: lost update: 1")) != bug_family(
        Bug("exception", "AssertionError: lost update: 2")
    )
    assert bug_family(Bug("deadlock", "Thread-1 waits for Thread-2 at step 40")) == bug_family(
        Bug("deadlock", "Thread-3 waits for Thread-4 at step 52")
    )


@pytest.mark.torch
def test_keep_going_reports_a_mismatch_once_and_counts_its_hits(tmp_path: Path, capsys) -> None:
    program = tmp_path / "mismatch.py"
    program.write_text(MISMATCH)
    report = tmp_path / "r.json"
    status = main(
        ["check", f"{program}:main", "--keep-going", "--budget", "20", "--strategy", "random",
         "--out", str(tmp_path / "o"), "--json", str(report)], contained=False
    )
    assert status == 1
    data = json.loads(report.read_text())
    assert [bug["kind"] for bug in data["bugs"]] == ["collective_mismatch"]
    # Every execution shows it, with either rank first.
    assert data["bugs"][0]["hits"] == 20
    assert len(list((tmp_path / "o").glob("bug-*.json"))) == 1
