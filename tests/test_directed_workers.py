"""fuzz, symbolic and hybrid divided among --workers: a sharded corpus, merged in rounds."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.campaign.campaign import Campaign
from dnsse.campaign.config import CampaignConfig
from dnsse.search.corpus import Corpus, CorpusEntry
from dnsse.search.corpus_share import ROUND, Merger, Sharing
from dnsse.search.fuzz import FuzzStrategy
from dnsse.search.symbolic import SymbolicStrategy
from tests.helpers import PROGRAMS


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600)


def test_workers_pick_disjoint_shares_of_the_merged_corpus_and_their_own_fresh_finds() -> None:
    corpora = [Corpus(), Corpus()]
    for worker, corpus in enumerate(corpora):
        corpus.share = (worker, 2)
        corpus.entries = [CorpusEntry([], {}, [], [], 1, 0, "fuzz", key=key) for key in range(6)]
    fresh = CorpusEntry([], {}, [], [], 1, 0, "fuzz")
    corpora[1].add(fresh)
    rng = random.Random(0)
    picked = [{id(corpus.pick(rng)) for _ in range(300)} for corpus in corpora]
    keys = [{entry.key for entry in corpus.entries if id(entry) in ids} for corpus, ids in zip(corpora, picked)]
    assert keys[0] == {0, 2, 4}
    assert keys[1] == {1, 3, 5, None}  # None: the entry worker 1 found since the last merge
    assert id(fresh) in picked[1]


def _worker_runs(strategies: list, campaigns: list[Campaign], round_number: int) -> None:
    """Each simulated worker runs its executions of one round (indices w, w+N, ...)."""
    workers = len(strategies)
    for worker, (strategy, campaign) in enumerate(zip(strategies, campaigns)):
        for index in range(round_number * ROUND * workers + worker, (round_number + 1) * ROUND * workers, workers):
            strategy.observe(campaign.execute(strategy.chooser_for(index)))


@pytest.mark.parametrize("strategy", [FuzzStrategy, SymbolicStrategy])
def test_after_a_merge_every_worker_holds_the_same_corpus_and_coverage(strategy: type) -> None:
    target = f"{PROGRAMS}/directed_inputs.py:staged"
    campaigns = [Campaign(CampaignConfig(target=target, strategy="fuzz"), feedback=True) for _ in range(2)]
    strategies = [strategy(0), strategy(0)]
    sharings = [Sharing.of(s, c.coverage_map, worker, 2) for worker, (s, c) in enumerate(zip(strategies, campaigns))]
    merger = Merger()
    with campaigns[0].framework.activate():
        for campaign in campaigns:
            campaign.prepare()
        for number in range(3):
            _worker_runs(strategies, campaigns, number)
            learnt = [sharing.learnt() for sharing in sharings]
            found = sum(len(record["entries"]) for record in learnt)
            merged = merger.merge(learnt)
            for sharing in sharings:
                sharing.absorb(merged)
            assert len(merged["entries"]) == found
    first, second = (s.corpus for s in strategies)
    assert merger.entries >= 2
    assert [(e.key, e.choices) for e in first.entries] == [(e.key, e.choices) for e in second.entries]
    assert [e.key for e in first.entries] == list(range(merger.entries))
    maps = [c.coverage_map for c in campaigns]
    assert maps[0].branches == maps[1].branches and maps[0].interleavings == maps[1].interleavings
    if strategy is SymbolicStrategy:
        assert strategies[0].taken == strategies[1].taken


@pytest.mark.parametrize("entry", ["pair_equal", "narrow_band"])
def test_symbolic_divided_between_two_workers_still_solves_the_branch(entry: str, tmp_path: Path) -> None:
    """Each worker asks its share of the default run's queries: the one that solves the bug is asked by one."""
    report = tmp_path / "r.json"
    done = run_cli(
        "check", f"{PROGRAMS}/directed_inputs.py:{entry}", "--strategy", "symbolic", "--workers", "2",
        "--budget", "20", "--out", str(tmp_path), "--json", str(report), "--quiet",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(report.read_text())
    assert data["bugs"][0]["kind"] == "exception"
    assert data["engines"]["symbolic"]["confirmed"] >= 1


@pytest.mark.slow
def test_the_same_seed_and_workers_run_the_same_directed_search(tmp_path: Path) -> None:
    """The exact guarantee for directed strategies: same seed, same number of workers, same executions."""
    reports = []
    for attempt in range(2):
        report = tmp_path / f"{attempt}.json"
        done = run_cli(
            "check", f"{PROGRAMS}/directed_inputs.py:pool_race", "--workers", "2", "--seed", "3",
            "--budget", str(4 * ROUND * 2), "--keep-going", "--no-minimize", "--out", str(tmp_path / str(attempt)),
            "--json", str(report), "--quiet",
        )
        assert done.returncode in (0, 1), done.stdout + done.stderr
        reports.append(json.loads(report.read_text()))
    first, second = reports
    assert first["strategy"] == "hybrid" and first["executions"] == 4 * ROUND * 2
    assert first["search"]["merged_rounds"] >= 3 and first["search"]["shared_corpus_entries"] >= 1
    assert first["engines"] == second["engines"]
    assert first["coverage"] == second["coverage"]
    assert first["search"] == second["search"]
    assert {(b["kind"], b["message"]) for b in first["bugs"]} == {(b["kind"], b["message"]) for b in second["bugs"]}
