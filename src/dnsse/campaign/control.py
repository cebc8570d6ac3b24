"""Steering a campaign from outside its loop: stop, save, resume, and the flight recorder.

The command line runs campaigns under a :class:`CampaignControl`. A signal
(Ctrl-C, SIGTERM) only sets ``stop_signal``: the loop stops at the end of the
current execution, so the summary and the reports are still written. The
state is saved as the campaign goes (see :mod:`dnsse.campaign.resume`), so an
interrupted campaign can be resumed. An execution whose agents would not
stop (a thread spinning outside every scheduling point, past the wall-clock
limit) leaves the process unfit for the next one: :class:`RestartNeeded`
asks the supervising process for a fresh one, which resumes the campaign.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.choices import Choice, Chooser, FirstChooser
from dnsse.engine.flight import TEMPLATE_FILE, FlightRecorder, supervised_directory
from dnsse.engine.inputs import show_value
from dnsse.engine.memory import is_exhausted, memory_limit
from dnsse.engine.runner import ExecutionResult
from dnsse.errors import BadInput
from dnsse.campaign.relocation import project_root
from dnsse.campaign.trace import Trace
from dnsse.campaign.resume import SavedBug, SavedCampaign, discard_state, save_state
from dnsse.campaign.supervisor import RestartNeeded

if TYPE_CHECKING:
    from dnsse.campaign.campaign import Campaign
    from dnsse.campaign.config import FoundBug
    from dnsse.search.saved_learning import Rerun
    from dnsse.search.strategy import Strategy

SAVE_EVERY_S = 1.0
# Saving takes at most 1/SAVE_COST_SHARE of the campaign's time.
SAVE_COST_SHARE = 20


@dataclass
class CampaignControl:
    out: Path
    recorder: FlightRecorder | None = None
    resume: SavedCampaign | None = None
    # The signal that asked the campaign to stop (set by a signal handler).
    stop_signal: int | None = None
    # Whether a process that replaces this one would continue the campaign.
    restartable: bool = False
    # Whether the state is saved for --resume (the command line's campaigns).
    saving: bool = True
    # Told what the campaign does between executions ("minimizing", "confirming", "exploring"): the progress line.
    on_phase: Callable[[str], None] | None = None
    _saved_at: float = field(default=0.0, repr=False)
    _bugs_saved: int = field(default=0, repr=False)
    _save_every_s: float = field(default=SAVE_EVERY_S, repr=False)

    def restore(self, campaign: Campaign, strategy: Strategy) -> int:
        """Put a resumed campaign's bugs, clock and strategy state back; the executions already done."""
        saved = self.adopt(campaign, strategy.name)
        if saved is None:
            return 0
        if saved.strategy_state:
            # Here, not at the top: what learns (coverage maps, the solver) is imported by strategies that learn.
            from dnsse.search.saved_learning import restore_coverage

            try:
                strategy.restore(saved.strategy_state, rerun_for(campaign))
                if saved.coverage and campaign.coverage_map is not None:
                    restore_coverage(campaign.coverage_map, saved.coverage)
            except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
                raise self.damaged(strategy.name, error) from None
        return saved.executions

    def adopt(self, campaign: Campaign, strategy: str, workers: int = 1) -> SavedCampaign | None:
        """The saved state of a resumed campaign, its bugs, clock and inconclusive runs put back; BadInput for another campaign's."""
        from dnsse.campaign.config import FoundBug, InconclusiveRun

        saved = self.resume
        if saved is None:
            return None
        refusal = saved.refusal(
            str(campaign.target.spec), campaign.framework.name, strategy, campaign.config.seed,
            campaign.config.world_size, workers, campaign.config.ray_address is not None,
        )
        if refusal is not None:
            raise BadInput(f"--resume {self.out}: the saved campaign is another one: {refusal}")
        campaign.started -= saved.elapsed_s
        for bug in saved.bugs:
            found = FoundBug(bug.to_bug(), bug.execution, Path(bug.trace), bug.elapsed_s, bug.inputs)
            campaign.adopt(found)
        campaign.inconclusive.extend(InconclusiveRun.from_json(raw) for raw in saved.inconclusive)
        self._bugs_saved = len(saved.bugs)
        return saved

    def damaged(self, strategy: str, error: Exception) -> BadInput:
        return BadInput(
            f"--resume {self.out}: what the {strategy} strategy learnt is damaged ({error}); run the campaign again"
        )

    def started(self, campaign: Campaign) -> None:
        """In a supervised process: leave what the supervisor needs to write the trace of a crash."""
        directory = supervised_directory()
        if directory is None:
            return
        config = campaign.config
        template = Trace(
            target=str(campaign.target.spec),
            framework=campaign.framework.name,
            world_size=config.world_size,
            inputs={name: show_value(value) for name, value in campaign.pinned.items()},
            pinned=sorted(campaign.pinned),
            choices=[],
            limits=config.limits,
            bug=Bug(BugKind.CRASH, ""),
            strategy=config.strategy,
            execution=0,
            steps=0,
            specs=campaign.suite.texts if campaign.suite is not None else [],
            faults=config.faults,
            source_sha256=campaign.target.source_sha256,
            memory_limit=memory_limit(),
            directory=str(campaign.target.spec.directory or ""),
            root=str(project_root(campaign.target.spec.path)),
        )
        (directory / TEMPLATE_FILE).write_text(json.dumps(template.to_json()), encoding="utf-8")

    def chooser(self, number: int, chooser: Chooser) -> Chooser:
        """The chooser of execution ``number``, recorded when a recorder watches."""
        if self.recorder is None:
            return chooser
        self.recorder.begin(number)
        return self.recorder.wrap(chooser)

    def ended(self) -> None:
        """The execution ended inside this process, whatever its outcome (a bug, bad input, ...)."""
        if self.recorder is not None:
            self.recorder.end()

    def after(
        self, campaign: Campaign, strategy: Strategy, executions: int, result: ExecutionResult, last: bool
    ) -> None:
        """Bookkeeping after each execution; ``last`` when the loop stops after it anyway."""
        if self.due(campaign):
            self.save(campaign, strategy, executions)
        # Memory a program exhausted may stay with the process (the allocator keeps its heap): start afresh.
        if (result.abandoned or is_exhausted(result.bug)) and not last and self.restartable:
            self.save(campaign, strategy, executions)
            raise RestartNeeded(", ".join(result.abandoned) or "memory exhausted")

    def due(self, campaign: Campaign) -> bool:
        """Whether the state should be saved now: a new bug, or a while since the last save."""
        return len(campaign.found) > self._bugs_saved or time.perf_counter() - self._saved_at >= self._save_every_s

    def save(self, campaign: Campaign, strategy: Strategy, executions: int) -> None:
        coverage = campaign.coverage_map
        learnt = strategy.state() if self.saving else {}
        saved_coverage = {}
        if coverage is not None:
            from dnsse.search.saved_learning import coverage_state

            saved_coverage = coverage_state(coverage)
        self.save_learnt(campaign, strategy.name, executions, learnt, saved_coverage)

    def save_learnt(
        self, campaign: Campaign, strategy: str, executions: int, learnt: dict, coverage: dict, workers: int = 1
    ) -> None:
        """Save the campaign with what its strategy learnt (``learnt``, ``coverage``: JSON)."""
        if not self.saving:
            return
        began = time.perf_counter()
        save_state(
            SavedCampaign(
                target=str(campaign.target.spec),
                framework=campaign.framework.name,
                strategy=strategy,
                seed=campaign.config.seed,
                world_size=campaign.config.world_size,
                executions=executions,
                elapsed_s=time.perf_counter() - campaign.started,
                bugs=[_saved(found) for found in campaign.found],
                strategy_state=learnt,
                inconclusive=[run.to_json() for run in campaign.inconclusive],
                coverage=coverage,
                workers=workers,
                cluster=campaign.config.ray_address is not None,
            ),
            self.out,
        )
        self._saved_at = time.perf_counter()
        # A large corpus takes a while to write: save seldom enough that it costs a few percent at most.
        self._save_every_s = max(SAVE_EVERY_S, SAVE_COST_SHARE * (self._saved_at - began))
        self._bugs_saved = len(campaign.found)

    def finish(self, save: Callable[[], None]) -> None:
        """Keep the state of an interrupted campaign for --resume (``save()``); a finished one needs none."""
        if self.stop_signal is not None:
            save()
        elif self.saving:
            discard_state(self.out)


def rerun_for(campaign: Campaign) -> Rerun:
    """Runs the target along recorded choices, as the strategies that rebuild what they learnt need."""
    from dnsse.search.planned import PlannedChooser
    from dnsse.symbolic.concolic import Concolic

    def rerun(choices: list[Choice], concolic: bool | Concolic) -> ExecutionResult:
        if isinstance(concolic, Concolic):
            stand_in = concolic.input_value
        else:
            stand_in = Concolic().input_value if concolic else None
        return campaign.rerun(PlannedChooser(choices, FirstChooser(), stand_in=stand_in))

    return rerun


def _saved(found: FoundBug) -> SavedBug:
    return SavedBug(found.bug.to_json(), found.execution, str(found.trace_path), found.elapsed_s, found.inputs)
