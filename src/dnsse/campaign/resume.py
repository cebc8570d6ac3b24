"""A campaign's saved state: what ``--resume DIR`` continues from.

The state is JSON in the campaign's output directory: the campaign it belongs
to (target, framework, strategy, seed, world size), how many executions are
done, the bugs found so far with their traces, and the strategy's learnt
state. Strategies pick execution ``i``'s choices from the seed and ``i``, so
a campaign resumed at execution ``n`` runs the executions the uninterrupted
campaign would have run, and finds the bugs it would have found.

It is written while the campaign runs (after each new bug, and every
second), so that an interrupted or crashed campaign leaves it behind; a
campaign that ends normally removes it.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dnsse.engine.bugs import Bug
from dnsse.errors import BadInput

STATE_FILE = "campaign.state"
FORMAT = "dnsse-campaign-state"


@dataclass
class SavedBug:
    bug: dict
    execution: int
    trace: str
    elapsed_s: float
    inputs: dict[str, object] = field(default_factory=dict)

    def to_bug(self) -> Bug:
        return Bug.from_json(self.bug)


@dataclass
class SavedCampaign:
    target: str
    framework: str
    strategy: str
    seed: int
    world_size: int
    executions: int = 0
    elapsed_s: float = 0.0
    bugs: list[SavedBug] = field(default_factory=list)
    # What an adaptive strategy learnt (see its state()/restore()); {} for the others.
    strategy_state: dict = field(default_factory=dict)
    # Executions that hit the wall-clock limit, as InconclusiveRun.to_json() gives them.
    inconclusive: list[dict] = field(default_factory=list)
    # The coverage a coverage-guided campaign has seen (see dnsse.search.saved_learning); {} for the others.
    coverage: dict = field(default_factory=dict)
    # --workers: each worker runs its own share of the executions (see dnsse.campaign.local_progress).
    workers: int = 1
    # --ray-address: the driver's progress (see dnsse.campaign.ray_progress), unlike that of this machine's workers.
    cluster: bool = False

    def refusal(
        self, target: str, framework: str, strategy: str, seed: int, world_size: int, workers: int = 1,
        cluster: bool = False,
    ) -> str | None:
        """Why this state cannot continue the campaign described, or ``None`` when it can."""
        mine = (self.target, self.framework, self.strategy, self.seed, self.world_size, self.workers)
        theirs = (target, framework, strategy, seed, world_size, workers)
        if self.cluster != cluster:
            saved_where, given_where = ("on a Ray cluster", "on this machine") if self.cluster else ("on this machine", "on a Ray cluster")
            return f"it was saved by a campaign that ran {saved_where}, and this one runs {given_where} (--ray-address)"
        names = ("target", "framework", "strategy", "seed", "world size", "--workers")
        for name, saved, given in zip(names, mine, theirs):
            if saved != given:
                return f"it was saved by a campaign with {name} {saved!r}, not {given!r}"
        return None


def state_path(directory: Path) -> Path:
    return Path(directory) / STATE_FILE


def save_state(state: SavedCampaign, directory: Path) -> None:
    """Write the state atomically (aside, then renamed), readable like the traces (0644)."""
    path = state_path(directory)
    handle, temporary = tempfile.mkstemp(prefix=".partial-", suffix=".tmp", dir=directory)
    os.fchmod(handle, 0o644)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump({"format": FORMAT, **asdict(state)}, stream, indent=1)
    os.replace(temporary, path)


def discard_state(directory: Path) -> None:
    try:
        state_path(directory).unlink()
    except FileNotFoundError:
        pass


def load_state(directory: Path) -> SavedCampaign:
    """The state saved in ``directory``; BadInput with what to do when there is none or it is damaged."""
    path = state_path(directory)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(
            f"--resume {directory}: there is no saved campaign there ({STATE_FILE} is missing). A campaign "
            "saves its state in its --out directory when it is interrupted; a finished campaign leaves none"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise BadInput(f"--resume {directory}: cannot read {path}: {error}") from None
    try:
        if not isinstance(raw, dict) or raw.pop("format", None) != FORMAT:
            raise ValueError(f"it is not a {FORMAT} file")
        bugs = [SavedBug(**bug) for bug in raw.pop("bugs")]
        state = SavedCampaign(**raw, bugs=bugs)
        if not isinstance(state.executions, int) or state.executions < 0:
            raise ValueError("'executions' must be a count")
        for bug in bugs:
            bug.to_bug()
    except (ValueError, TypeError, KeyError) as error:
        raise BadInput(f"--resume {directory}: {path} is damaged ({error}); run the campaign again") from None
    return state
