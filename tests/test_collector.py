"""The collector's young threshold while a campaign runs (dnsse.engine.collector)."""

from __future__ import annotations

import gc

from dnsse.engine.collector import CAMPAIGN_THRESHOLD, fewer_collections
from dnsse.frameworks.ray.framework import RayFramework


def test_the_young_threshold_rises_for_the_block_and_comes_back() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with fewer_collections():
            assert gc.get_threshold() == (CAMPAIGN_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_a_higher_threshold_the_user_set_is_never_lowered() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(50_000, 20, 5)
        with fewer_collections():
            assert gc.get_threshold() == (50_000, 20, 5)
        assert gc.get_threshold() == (50_000, 20, 5)
    finally:
        gc.set_threshold(*before)


def test_a_ray_campaign_runs_with_the_higher_threshold_and_puts_it_back() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with RayFramework().activate():
            assert gc.get_threshold()[0] == CAMPAIGN_THRESHOLD
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)
