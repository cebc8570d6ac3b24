"""Where every execution enters its campaign: run here, reported by a worker process or a Ray task, or died in.

Whichever executor ran an execution (:mod:`dnsse.campaign.executor`), its
outcome goes through one :class:`Intake`: the caller's ``on_execution``
sees it, an inconclusive run or a rejected input is kept, and a bug is
recorded (deduplicated, minimized unless the process that ran it did,
written, confirmed, announced) if it still counts. A stop is decided here
too: after the first bug, unless ``keep_going``, and after an inconclusive
run (the next executions would likely hang too).

An execution run elsewhere arrives as a report (:mod:`dnsse.campaign.worker_reports`):
the execution as it ran, with its bug minimized where it ran
(``minimized``), the arcs it covered, the backend semantics it modelled and
the strategy's counts in that process. A worker process that found a bug
says so (:meth:`Intake.hold`) before it minimizes it, since minimizing runs
other schedules that may kill it; if it dies, the bug as found stands. A
worker process that dies in an execution (:meth:`Intake.died`) made that
execution a ``crash`` bug, whose recorded choices replay it.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Callable, Iterator

from dnsse.campaign.worker_death import MAX_DEATHS_WITHOUT_PROGRESS, Death, WorkerFiles, death_message
from dnsse.campaign.worker_reports import adopt_semantics, merge_reported_arcs, result_from_report
from dnsse.campaign.worker_totals import WorkerTotals
from dnsse.errors import BadInput

if TYPE_CHECKING:
    from dnsse.campaign.campaign import Campaign
    from dnsse.coverage.arcs import ArcRecorder
    from dnsse.engine.runner import ExecutionResult

OnExecution = Callable[[int, "ExecutionResult", "ArcRecorder | None"], None]


class Intake:
    """The one way executions and deaths enter ``campaign``; ``stop`` is called as soon as the campaign should stop.

    ``inside_framework``: the caller runs inside the framework's activation
    already (the in-process loop); otherwise recording a bug activates it,
    since minimizing and confirming run the target.
    """

    def __init__(
        self,
        campaign: Campaign,
        on_execution: OnExecution | None = None,
        stop: Callable[[], None] | None = None,
        inside_framework: bool = False,
        executions: int = 0,
    ) -> None:
        """``executions``: those a resumed campaign had run already."""
        self.campaign = campaign
        # Executions taken so far (a death in the run of minimizing a bug is no execution of its own).
        self.executions = executions
        self.on_execution = on_execution
        self._stop = stop
        self.inside_framework = inside_framework
        # The strategies' counts of the processes that ran executions (see dnsse.campaign.worker_totals).
        self.totals = WorkerTotals()
        self.stopping = False
        # A bug each worker found and is minimizing, as found (its report).
        self._held: dict[object, dict] = {}
        # Deaths in a row of each worker slot with no execution in between.
        self._fruitless: dict[object, int] = {}

    def take(
        self,
        number: int | None,
        result: ExecutionResult,
        minimized: ExecutionResult | None = None,
        shrink: bool = True,
        rerunnable: bool = True,
        counted: bool = True,
    ) -> bool:
        """An execution as it ran; whether the campaign should stop now.

        ``number``: the execution's number (from 1), or ``None`` to number
        executions in the order they arrive. ``minimized``: its bug as the
        process that ran it minimized it; ``shrink``: minimize it here (only
        where nothing minimized it and running it cannot kill this process);
        ``rerunnable``: False for a crash of a worker process, whose trace is
        written as recorded; ``counted``: False when it was counted already.
        """
        if counted:
            self.executions += 1
        if number is None:
            number = self.executions
        campaign = self.campaign
        keep_going = campaign.config.keep_going
        if self.on_execution is not None:
            self.on_execution(number, result, campaign.recorder)
        if result.inconclusive is not None:
            campaign.record(result, number)
            if not keep_going:
                self._stopping()
            return self.stopping
        if result.rejected is not None:
            campaign.record(result, number)  # counted, never a bug
            return self.stopping
        # Without keep_going only the first bug counts; workers may report more before they stop.
        if result.bug is None or (campaign.found and not keep_going):
            return self.stopping
        if not keep_going:
            self._stopping()  # first, so that workers wind down while this process confirms the bug
        with self._framework():
            campaign.record(minimized or result, number, shrink=shrink and minimized is None, rerunnable=rerunnable)
        return self.stopping

    def take_report(self, number: int | None, report: dict, worker: object = None, process: object = None) -> bool:
        """An execution reported as JSON by worker ``worker`` (a process, a Ray task); whether the campaign should stop.

        ``process`` names the process that ran it, whose strategy's counts
        the report carries (``None``: it carries none). A ``crashed`` report
        (the execution killed its process) is never run here; a
        ``contained`` one comes from a program known to kill its process,
        so its bug is not minimized here either.
        """
        self._held.pop(worker, None)
        self._fruitless[worker] = 0
        campaign = self.campaign
        merge_reported_arcs(campaign.recorder, report.get("arcs") or {})
        adopt_semantics(campaign.framework, report.get("semantics"))
        if process is not None:
            self.totals.update(process, report)
        crashed = bool(report.get("crashed"))
        minimized = result_from_report(report["minimized"]) if report.get("minimized") else None
        return self.take(
            number,
            result_from_report(report),
            minimized,
            shrink=not crashed and not report.get("contained"),
            rerunnable=not crashed,
        )

    def hold(self, worker: object, report: dict) -> None:
        """Worker ``worker`` found this bug and minimizes it: should it die doing so, the bug as found stands."""
        self._held[worker] = report

    def died(self, worker: object, death: Death, files: WorkerFiles, number: Callable[[int], int | None]) -> int | None:
        """Worker ``worker``'s process died; the index of the execution it died in (a ``crash`` bug), if any.

        ``number`` gives the number of the execution of a report's index
        (``None``: in the order they arrive). A slot whose processes keep
        dying outside any execution is given up with bad input: the program
        (or the machine) kills it as it loads.
        """
        held = self._held.pop(worker, None)
        if held is not None:
            # It died minimizing a bug: the bug as found stands (its run did not kill the worker).
            self.take(number(held["index"]), result_from_report(held), shrink=False)
        if death.index is None:
            self._fruitless[worker] = self._fruitless.get(worker, 0) + 1
            if self._fruitless[worker] >= MAX_DEATHS_WITHOUT_PROGRESS:
                raise BadInput(death_message(death))
            return None
        self._fruitless[worker] = 0
        # Died in a run of minimizing the held bug: a crash told with that execution, not one more execution.
        counted = held is None or held["index"] != death.index
        self.take(number(death.index), crash_of(death, files, self.campaign), shrink=False, rerunnable=False, counted=counted)
        return death.index

    def _stopping(self) -> None:
        if not self.stopping:
            self.stopping = True
            if self._stop is not None:
                self._stop()

    @contextlib.contextmanager
    def _framework(self) -> Iterator[None]:
        if self.inside_framework:
            yield
            return
        with self.campaign.framework.activate():
            yield


def crash_of(death: Death, files: WorkerFiles, campaign: Campaign) -> ExecutionResult:
    """The execution a worker process died in, as its campaign records it: a ``crash`` bug with the recorded choices."""
    crash = death.crash(files, campaign.target.spec.path.name)
    crash.inputs = dict(campaign.pinned)
    return crash
