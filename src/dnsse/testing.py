"""A test function checked as a campaign: what ``@dnsse.test`` runs when pytest calls the test.

The test's own module is the target, and the decorated function its entry
point (``LoadedTarget.entry_point`` unwraps the decorator), so every
execution gets fresh module globals exactly as with ``dnsse check``. A bug
fails the test with its story and the ``dnsse replay`` command; its trace is
kept under ``.dnsse/pytest/`` of the directory pytest runs in.

The executions run in a worker process (``contained``, the default), so a
test whose program kills its process (``os._exit``, a segfault, a fatal
signal) fails with a ``crash`` bug and the session goes on; this costs one
process start per test. ``@dnsse.test(contained=False)`` runs them in the
pytest process instead: faster, and as fragile as the program.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dnsse.engine.bugs import BugKind
from dnsse.engine.limits import Limits
from dnsse.engine.memory import is_exhausted
from dnsse.report.console import bug_block
from dnsse.report.story import tell
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign
from dnsse.search.registry import DEFAULT

TRACES = Path(".dnsse") / "pytest"


class BugFound(AssertionError):
    """A campaign run by ``@dnsse.test`` found a bug; the message tells it, trace and replay included."""

    def __init__(self, text: str, trace: Path) -> None:
        super().__init__(text)
        self.text = text
        self.trace = trace


@dataclass(frozen=True)
class TestSettings:
    framework: str = "auto"
    world_size: int = 2
    budget: int = 200
    strategy: str = DEFAULT
    seed: int = 0
    spec: tuple[str, ...] = field(default_factory=tuple)
    time_budget: float | None = None
    contained: bool = True
    # Virtual seconds the scheduler may stall runnable agents in one execution (see dnsse.engine.clock).
    max_delay: float = Limits.max_delay


# How much longer a profile's campaigns search than the decorator says (DNSSE_PROFILE).
PROFILES = {"default": 1, "ci": 1, "nightly": 10}


@dataclass(frozen=True)
class Overrides:
    """What the command line (``--dnsse-budget``, ``--dnsse-seed``) and ``DNSSE_PROFILE`` change in every test."""

    budget: int | None = None
    seed: int | None = None
    budget_factor: int = 1

    @staticmethod
    def from_options(budget: int | None, seed: int | None, environment: dict | os._Environ) -> Overrides:
        profile = environment.get("DNSSE_PROFILE", "default") or "default"
        if profile not in PROFILES:
            raise ValueError(f"DNSSE_PROFILE={profile!r} is not a profile; use one of {', '.join(PROFILES)}")
        if budget is not None and budget < 1:
            raise ValueError(f"--dnsse-budget must be at least 1, got {budget}")
        return Overrides(budget, seed, PROFILES[profile])

    def applied(self, settings: TestSettings) -> TestSettings:
        budget = self.budget if self.budget is not None else settings.budget * self.budget_factor
        seed = self.seed if self.seed is not None else settings.seed
        # A longer search is not cut short by a time budget written for the short one.
        time_budget = settings.time_budget if self.budget is None and self.budget_factor == 1 else None
        return dataclasses.replace(settings, budget=budget, seed=seed, time_budget=time_budget)


_overrides = [Overrides()]


def set_overrides(overrides: Overrides) -> None:
    """Set by the pytest plugin from its options and the environment, for the whole session."""
    _overrides[0] = overrides


def checked_settings(settings: TestSettings) -> TestSettings:
    """``settings`` if every field is one dnsse takes; a ValueError naming the field otherwise.

    Called when ``@dnsse.test`` decorates, so that a misspelt framework or
    strategy fails the test module's collection, not the test's run.
    """
    from dnsse.engine.target import FRAMEWORKS
    from dnsse.search.registry import BUILT

    def refuse(what: str) -> ValueError:
        return ValueError(f"@dnsse.test: {what}")

    if settings.framework not in ("auto", *FRAMEWORKS):
        raise refuse(f"unknown framework {settings.framework!r}; use one of auto, {', '.join(FRAMEWORKS)}")
    if settings.strategy not in BUILT:
        raise refuse(f"unknown strategy {settings.strategy!r}; use one of {', '.join(BUILT)}")
    for name in ("world_size", "budget"):
        value = getattr(settings, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise refuse(f"{name} must be a whole number of at least 1, got {value!r}")
    if not isinstance(settings.seed, int) or isinstance(settings.seed, bool):
        raise refuse(f"seed must be a whole number, got {settings.seed!r}")
    if settings.time_budget is not None and not (isinstance(settings.time_budget, (int, float)) and settings.time_budget > 0):
        raise refuse(f"time_budget must be a number of seconds above 0, got {settings.time_budget!r}")
    if not isinstance(settings.max_delay, (int, float)) or not settings.max_delay >= 0:
        raise refuse(f"max_delay must be a number of seconds, at least 0 (or math.inf), got {settings.max_delay!r}")
    return settings


def check_test(function: Callable, settings: TestSettings) -> None:
    """Run the campaign of the test ``function``; raise :class:`BugFound` on its first bug."""
    settings = _overrides[0].applied(settings)
    path = Path(inspect.getfile(function))
    name = function.__name__
    if "." in function.__qualname__.replace(".<locals>.", "."):
        raise TypeError(f"@dnsse.test decorates top-level test functions only, not {function.__qualname__}")
    out = Path.cwd() / TRACES / _directory_name(path, name)
    config = CampaignConfig(
        target=f"{path}:{name}",
        framework=settings.framework,
        world_size=settings.world_size,
        strategy=settings.strategy,
        budget=settings.budget,
        time_budget=settings.time_budget,
        seed=settings.seed,
        out=out,
        specs=list(settings.spec),
        contained=settings.contained,
        limits=Limits(max_delay=settings.max_delay),
        known_failures=True,
    )
    result = run_campaign(config)
    if not result.bugs:
        return
    found = result.bugs[0]
    # A crash is not replayed in this process for its story (it would kill the test session); memory exhausted neither.
    replayable_here = found.bug.kind != BugKind.CRASH and not is_exhausted(found.bug)
    story = tell(found.trace_path) if replayable_here else None
    header = (
        f"dnsse found a bug in {name} ({result.framework}, {result.strategy}, seed {settings.seed}, "
        f"{result.executions} of at most {settings.budget} executions)"
    )
    raise BugFound("\n".join([header, *bug_block(found, story)]), found.trace_path)


def _directory_name(path: Path, name: str) -> str:
    return re.sub(r"[^\w.-]", "_", f"{path.stem}.{name}")
