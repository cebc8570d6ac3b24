"""The collector while a campaign runs (dnsse.engine.collector): the young threshold, and the frozen heap."""

from __future__ import annotations

import gc
from typing import Iterator

import pytest

from dnsse.engine.collector import CAMPAIGN_THRESHOLD, fewer_collections, old_objects_frozen
from dnsse.frameworks.ray.framework import RayFramework


@pytest.fixture
def user_threshold() -> Iterator[None]:
    """Each test sets the threshold a user might have; the process's own comes back after."""
    before = gc.get_threshold()
    try:
        yield
    finally:
        gc.set_threshold(*before)


def test_the_young_threshold_rises_for_the_block_and_comes_back(user_threshold: None) -> None:
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (CAMPAIGN_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_the_user_set_is_never_lowered(user_threshold: None) -> None:
    gc.set_threshold(50_000, 20, 5)
    with fewer_collections():
        assert gc.get_threshold() == (50_000, 20, 5)
    assert gc.get_threshold() == (50_000, 20, 5)


def test_a_ray_campaign_runs_with_the_higher_threshold_and_puts_it_back(user_threshold: None) -> None:
    gc.set_threshold(700, 10, 10)
    with RayFramework().activate():
        assert gc.get_threshold()[0] == CAMPAIGN_THRESHOLD
    assert gc.get_threshold() == (700, 10, 10)


def test_the_heap_is_frozen_for_the_block_and_collected_again_after() -> None:
    gc.unfreeze()
    with old_objects_frozen():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_a_heap_frozen_before_the_block_stays_frozen() -> None:
    # As in a worker forked from the fork server, which froze its heap.
    gc.freeze()
    try:
        with old_objects_frozen():
            pass
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
