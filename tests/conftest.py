"""Tests that need torch are skipped, with the reason, on a Python that has no torch installed."""

from __future__ import annotations

import importlib.util

import pytest

_TORCH = importlib.util.find_spec("torch") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _TORCH:
        return
    skip = pytest.mark.skip(reason="torch is not installed for this Python (it is an optional dependency)")
    for item in items:
        if item.get_closest_marker("torch") is not None:
            item.add_marker(skip)
