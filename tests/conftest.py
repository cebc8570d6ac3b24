"""Tests that need torch are skipped, with the reason, on a Python that has no torch installed.

Under ``pytest -n N --dist loadgroup`` (``make test``) the tests that start
real Ray or real gloo processes run one after another on one worker: each
of them starts a cluster or process group of its own, and two at once would
only compete for the same cores and memory. Every other test writes only
under its own ``tmp_path`` and runs on any worker.

And every trace the suite writes is checked, when the session ends, against
the delay bound it was found under: the stalls it records add up to at most
its ``limits.max_delay`` (dnsse.engine.clock).
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import settings

_TORCH = importlib.util.find_spec("torch") is not None

# Property tests: no per-example deadline (a loaded machine would fail a correct example for its speed),
# and no example database written into the checkout (parallel workers would share it).
settings.register_profile("dnsse", deadline=None, database=None)
settings.load_profile("dnsse")

# The markers of tests that start real backends, and the one worker group they share.
REAL_BACKENDS = ("ray", "gloo")
REAL_BACKENDS_GROUP = "real-backends"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="torch is not installed for this Python (it is an optional dependency)")
    for item in items:
        if not _TORCH and item.get_closest_marker("torch") is not None:
            item.add_marker(skip)
        if any(item.get_closest_marker(name) is not None for name in REAL_BACKENDS):
            item.add_marker(pytest.mark.xdist_group(REAL_BACKENDS_GROUP))
    # The modules with slow tests first, each kept whole (its module-scoped fixtures are made once): the
    # workers hand out tests in this order, so the suite does not end with one worker on a long test
    # while the others wait.
    slow_modules = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow_modules)


def stalls_beyond_their_bound(root: Path) -> list[str]:
    """The traces under ``root`` whose stalls add up to more than their delay bound."""
    beyond = []
    for path in root.rglob("bug-*.json"):
        try:
            trace = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a test's deliberately broken trace
        if not isinstance(trace, dict) or trace.get("format") != "dnsse-trace":
            continue
        bound = trace.get("limits", {}).get("max_delay", "inf")
        bound = math.inf if bound == "inf" else float(bound)
        stalled = sum(float(stall["seconds"]) for stall in trace.get("stalls", []))
        if stalled > bound + 1e-9:
            beyond.append(f"{path}: stalls add up to {stalled:g}s, over its --max-delay of {bound:g}s")
    return beyond


@pytest.fixture(scope="session", autouse=True)
def every_trace_keeps_its_delay_bound(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    beyond = stalls_beyond_their_bound(tmp_path_factory.getbasetemp())
    assert not beyond, "\n".join(beyond)
