"""A campaign's configuration and result, as plain data.

:class:`CampaignConfig` is what the command line, ``@dnsse.test`` and
scripts ask for; :class:`CampaignResult` is what every executor returns
and every report reads (the terminal, JSON, HTML, JUnit, SARIF).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dnsse.coverage.arcs import BranchCoverage
from dnsse.engine.bugs import Bug
from dnsse.engine.execution import Limits
from dnsse.engine.inconclusive import Inconclusive
from dnsse.search.registry import DEFAULT

if TYPE_CHECKING:
    from dnsse.advisor.settings import ModelSettings


@dataclass
class KnownFailures:
    """What the known failures of a campaign's target did when replayed first (dnsse.campaign.known_failures)."""

    replayed: int = 0
    still_failing: int = 0
    dropped: int = 0

    def to_json(self) -> dict[str, int]:
        return {"replayed": self.replayed, "still_failing": self.still_failing, "dropped": self.dropped}


@dataclass
class CampaignConfig:
    target: str
    framework: str = "auto"
    world_size: int = 2
    strategy: str = DEFAULT
    budget: int | None = 1000
    time_budget: float | None = None
    seed: int = 0
    keep_going: bool = False
    out: Path = Path(".dnsse")
    limits: Limits = field(default_factory=Limits)
    pct_depth: int = 3
    # dfs: at most this many preemptions per schedule (None: no bound, with reduction).
    preemption_bound: int | None = None
    minimize: bool = True
    # Measure branch coverage of the target (costs a line tracer in every agent).
    coverage: bool = False
    # LTL properties (and builtin:NAME) checked in every execution, besides
    # those of the spec files and the target's DNSSE_SPECS.
    specs: list[str] = field(default_factory=list)
    spec_files: list[Path] = field(default_factory=list)
    # Inject the faults a program declares (Ray actor crashes, task retries).
    faults: bool = True
    # Parallel worker processes on this machine (see dnsse.campaign.local_processes).
    workers: int = 1
    # Pinned inputs, NAME -> VALUE text as given to --input.
    inputs: dict[str, str] = field(default_factory=dict)
    # Let the program's prints through in every execution, instead of capturing them.
    show_output: bool = False
    # Where a launch command's relative paths start (None: the working directory).
    directory: Path | None = None
    # Run the executions as tasks on the Ray cluster at this address (see dnsse.campaign.ray_batches).
    ray_address: str | None = None
    # The language model the advisor of llm and hybrid asks (None: the offline advisor only).
    advisor: ModelSettings | None = None
    # Run the executions in a worker process even with one worker (see dnsse.campaign.local_processes): a program
    # that kills its process (os._exit, a segfault, a fatal signal) is a crash bug, not the caller's death.
    # Costs the start of one process (2-3 s, torch imported anew) per campaign.
    contained: bool = False
    # Replay the known failures of the target (OUT/known/) before exploring, and keep the bugs found there
    # (see dnsse.campaign.known_failures); the command line's default, off with --no-db.
    known_failures: bool = False


@dataclass
class FoundBug:
    bug: Bug
    execution: int
    trace_path: Path
    elapsed_s: float
    # The input values of the bug's execution, as JSON shows them.
    inputs: dict[str, object] = field(default_factory=dict)
    # Executions that showed this bug (the same failure, whichever agents played which part), this one included.
    hits: int = 1


@dataclass
class InconclusiveRun:
    """An execution that hit the wall-clock limit: not a bug, not a pass (see dnsse.engine.inconclusive)."""

    execution: int
    inconclusive: Inconclusive

    def to_json(self) -> dict:
        return {"execution": self.execution, **self.inconclusive.to_json()}

    @staticmethod
    def from_json(raw: dict) -> InconclusiveRun:
        return InconclusiveRun(int(raw["execution"]), Inconclusive.from_json(raw))


@dataclass
class CampaignResult:
    target: str
    framework: str
    strategy: str
    world_size: int
    executions: int
    elapsed_s: float
    bugs: list[FoundBug]
    # Set when a systematic strategy exhausted its bound: what was covered.
    verified: dict | None = None
    # Why an exhausted systematic search promises nothing, when it does not.
    unverified: str | None = None
    coverage: BranchCoverage | None = None
    # Per engine of a coverage-guided strategy: executions, new branches and interleavings, bugs.
    engines: dict[str, dict[str, int]] | None = None
    # Counts the strategy reports about its search (pct: spinning agents it dropped).
    search: dict[str, int] = field(default_factory=dict)
    # The signal (SIGINT, SIGTERM) that stopped the campaign before its budget; None when it was not stopped.
    interrupted: int | None = None
    # Executions that hit the wall-clock limit: with any, nothing is verified.
    inconclusive: list[InconclusiveRun] = field(default_factory=list)
    # llm and hybrid: per advisor, its calls, tokens, latency, cache hits and hints proposed, tried, useful.
    advisor: dict[str, dict] | None = None
    # torch: the backend semantics modelled ("gloo" or "nccl"); None for other frameworks.
    semantics: str | None = None
    # What the known failures replayed first did (None: none were replayed).
    known: KnownFailures | None = None
    # Executions whose input the program rejected (dnsse.assume, argument checking): never bugs.
    rejected: int = 0
