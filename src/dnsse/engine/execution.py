"""One controlled execution: the scheduler and its step loop.

Only one agent runs at a time. An agent that reaches a scheduling point calls
:meth:`Execution.yield_point` or :meth:`Execution.block`; the scheduler then
asks the chooser which runnable agent takes the next step, runs step agents
inline, and hands the baton to the chosen thread agent. The engine knows no
strategy: it only asks its :class:`~dnsse.engine.choices.Chooser`.
"""

from __future__ import annotations

import _thread
import sys
import time
import traceback
from dataclasses import dataclass, field
from types import FrameType
from typing import Callable

from dnsse.engine.agent import FINISHED, Agent, ExecutionAborted, StepAgent, ThreadAgent, Wait, current_agent
from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.choices import Chooser, Chosen, RecordingChooser, TraceDivergence
from dnsse.engine.clock import VirtualClock, step_cost
from dnsse.engine.determinism import DeterminismCheck, Expected
from dnsse.engine.fairness import Fairness
from dnsse.engine.greenlet_host import GreenletHost, agents_share_a_thread
from dnsse.engine.hang import blocked_in_the_kernel
from dnsse.engine.inconclusive import Inconclusive
from dnsse.engine.input_rejected import InputRejected
from dnsse.engine.limits import Limits
from dnsse.engine.livelock import SPIN_STEPS, LivelockWatch
from dnsse.engine.location import frame_location, source_line
from dnsse.engine.object_names import ObjectNames
from dnsse.engine.untraced import gettrace, settrace
from dnsse.engine.operation import Access, Operation, expiry_of
from dnsse.engine.readiness import Readiness
from dnsse.engine.run_wait import acquire_within
from dnsse.errors import NotUnderControl

# The last steps a livelock report counts, to say who kept running.
LIVELOCK_WINDOW = 10_000


@dataclass
class Event:
    """Something that happened at a step: the alphabet of specifications."""

    step: int
    agent: str
    name: str
    fields: dict = field(default_factory=dict)


class Execution:
    def __init__(
        self,
        chooser: Chooser,
        limits: Limits = Limits(),
        source_files: frozenset[str] = frozenset(),
        expected: Expected | None = None,
    ) -> None:
        # With ``expected`` (a trace to follow), every choice is checked against it.
        self.chooser = RecordingChooser(chooser, DeterminismCheck(expected) if expected is not None else None)
        # Asked once per execution, so choosers that do not look at operations
        # (random, pct, replay) cost nothing extra in the step loop.
        self._sees_operations = bool(getattr(chooser, "wants_operations", False))
        self.limits = limits
        # Files of the program under test: their frames locate agents in reports.
        self.source_files = source_files
        self.agents: list[Agent] = []
        self.active: list[Agent] = []
        # Which active agents can run, kept up to date as their waits change.
        self.readiness = Readiness()
        self.step = 0
        # Virtual time, and the delays the scheduler may add (dnsse.engine.clock).
        self.clock = VirtualClock(limits.max_delay)
        self.fairness = Fairness(limits.unfair_steps)
        self._livelock = LivelockWatch()
        # Whether some agent waits with a deadline (as of the latest step).
        self._deadlines = False
        self.history: list[tuple[int, Operation]] = []
        self.object_names = ObjectNames()
        # True while the scheduler runs (in the thread of the agent that yielded):
        # its code, and the chooser's, is not the program's and is not traced.
        self.scheduling = False
        # Why what some step touched may not be all the model saw (None: all seen).
        self.untrusted: str | None = None
        # The step during which each agent was created (0: before the first step).
        self.created_at: list[int] = []
        self.events: list[Event] = []
        self.bug: Bug | None = None
        self.divergence: str | None = None
        # Why the program rejected its input (dnsse.assume), when it did: the run is not judged.
        self.rejection: str | None = None
        # Set when the program called an API dnsse does not control: not a bug, bad input.
        self.refusal: str | None = None
        # Set when the wall-clock limit ended the run: neither a bug nor a pass.
        self.inconclusive: Inconclusive | None = None
        # dnsse's own failure inside the run (its traceback): the execution proves nothing (dnsse.errors.EngineFailure).
        self.failure: str | None = None
        # The agent found blocked outside control (a hang): no use waiting for it to unwind.
        self.stuck: ThreadAgent | None = None
        # Handlers the program gave signal.signal (see dnsse.engine.process_calls).
        self.signal_handlers: dict[int, object] = {}
        self.aborted = False
        self.completed = False
        # Frameworks explain a deadlock better when they can (a collective
        # that a finished rank never joined is a mismatch, not a deadlock).
        self.deadlock_explainers: list[Callable[[list[Agent]], Bug | None]] = []
        self.step_observers: list[Callable[[Agent, Operation], None]] = []
        self.event_observers: list[Callable[[Event], None]] = []
        # Given a framework's per-thread trace function (or None), the one to
        # install in an agent's thread: how branch coverage rides along.
        self.trace_hook: Callable[[Callable | None], Callable] | None = None
        # Called in a thread agent's own thread each time it runs again (its first step
        # included): how a framework gives each of its simulated processes its own copy of
        # process-wide state that agents of several processes would share here (torch's RNG).
        self.on_resume: Callable[[ThreadAgent], None] | None = None
        # What each framework keeps for this execution, by framework name: dropped with the execution
        # (a weak-keyed table would keep it forever, since that state refers back to the execution).
        self.framework_state: dict[str, object] = {}
        # Set before run() when the agents may share one OS thread (the framework allows it).
        self.greenlets_allowed = False
        self._host: GreenletHost | None = None
        # Set by run() where the scheduling choices need no check: the chooser's own
        # next_agent (or next_agent_seeing), and where each choice is recorded as a tuple.
        self._asks: Callable[..., int] | None = None
        self._records: Callable[[tuple], None] | None = None
        self._finished = _thread.allocate_lock()
        self._finished.acquire()
        self.started_at = 0.0
        self.elapsed_s = 0.0

    # ----------------------------------------------------------------- agents
    def register(self, agent: Agent) -> int:
        """Give ``agent``, fully built, its id and make it one of the execution's agents."""
        # The id first: the scheduler's thread may read every agent (an execution that timed out
        # describes where each stood) while the running agent's thread is registering this one.
        agent_id = agent.id = len(self.agents)
        self.agents.append(agent)
        self.active.append(agent)
        self.created_at.append(self.step)
        self.fairness.added(self.step)
        self.readiness.add(agent, agent_id)
        return agent_id

    def _leave(self, agent: Agent) -> None:
        """``agent`` ended."""
        agent.done = True
        self.active.remove(agent)
        self.readiness.leave(agent)

    def thread_agents(self) -> list[ThreadAgent]:
        return [a for a in self.agents if isinstance(a, ThreadAgent)]

    # -------------------------------------------------------- scheduling points
    def check_abort(self) -> None:
        if self.aborted:
            raise ExecutionAborted()

    def yield_point(self, agent: ThreadAgent, operation: Operation) -> None:
        """A point where another agent may run before ``operation`` happens."""
        if self.aborted:
            # Unwinding: what the agent was stopped at stays its pending operation.
            raise ExecutionAborted()
        if agent.importing:
            return  # a library import runs in one piece (see dnsse.engine.imports)
        agent.pending = operation
        agent.frame = sys._getframe(1)
        # The scheduler has nothing to trace: a thread's tracer would slow all of it (dnsse.engine.untraced).
        trace = gettrace()
        if trace is not None:
            settrace(None)
        try:
            # _switch, inlined: this is the path of every scheduling point.
            self.scheduling = True
            try:
                chosen = self._take_steps(agent)
            except TraceDivergence as divergence:
                self.diverge(str(divergence))
                chosen = None
            finally:
                self.scheduling = False
            if chosen is agent:
                return
            if chosen is None:
                raise ExecutionAborted()
            host = self._host
            if host is not None:
                host.switch(agent, chosen)
            else:
                self._hand_to(chosen)
                agent.park()
            if self.aborted:
                raise ExecutionAborted()
            if self.on_resume is not None:
                self.on_resume(agent)
        finally:
            if trace is not None:
                settrace(trace)

    def block(self, agent: ThreadAgent, wait: Wait, operation: Operation) -> bool:
        """Park ``agent`` until ``wait`` is ready; ``False`` when a timed wait expired.

        A wait with a timeout expires once virtual time passes its deadline, or
        where the scheduler stalls the others until then (see
        :class:`~dnsse.engine.agent.Wait` and :mod:`dnsse.engine.clock`).
        """
        if self.aborted:
            raise ExecutionAborted()
        if agent.importing and wait.ready():
            return True  # a library import runs in one piece (see dnsse.engine.imports)
        agent.pending = operation
        if wait.timeout is not None:
            wait.expiry = expiry_of(operation, wait.timeout)
            wait.deadline = self.clock.now + wait.timeout
        agent.waiting = wait
        agent.frame = sys._getframe(1)
        trace = gettrace()
        if trace is None:
            self._switch(agent)
        else:
            settrace(None)
            try:
                self._switch(agent)
            finally:
                settrace(trace)
        return not wait.timed_out

    def touch(self, objects: tuple[tuple[str, Access], ...]) -> None:
        """Record that the running step touched ``objects``, too (found out as it ran).

        Only one agent runs at a time, so the running step is the last one taken.
        """
        if self.history:
            who, operation = self.history[-1]
            self.history[-1] = (who, operation.touching(objects))

    def distrust(self, why: str) -> None:
        """Say that a step may have touched something no operation names; the first reason is kept."""
        if self.untrusted is None:
            self.untrusted = why

    def emit(self, agent: Agent | None, name: str, fields: dict) -> None:
        event = Event(self.step, agent.name if agent is not None else "-", name, fields)
        self.events.append(event)
        for observer in self.event_observers:
            observer(event)

    def choose_value(self, kind: str, options: int) -> int:
        """A non-scheduling choice (a message match, a fault, an input value) of the running agent."""
        if options <= 1:
            return 0
        asker = current_agent()
        frame = sys._getframe(1)
        try:
            return self.chooser.next_value(
                kind, options, lambda: Chosen(asker.name if asker is not None else "-", kind, self._where(frame))
            )
        except TraceDivergence as divergence:
            self.diverge(str(divergence))
            raise ExecutionAborted() from None

    def describe(self, agent: Agent, expiring: bool = False) -> Chosen:
        """What running ``agent`` now means (its wait expiring, if so), for the record of a choice."""
        frame = agent.frame if isinstance(agent, ThreadAgent) else None
        operation = agent.waiting.expiry if expiring else agent.pending  # type: ignore[union-attr]
        return Chosen(agent.name, operation.kind, self._where(frame))  # type: ignore[union-attr]

    def _where(self, frame: FrameType | None) -> str:
        files = self.source_files
        while frame is not None:
            if frame.f_code.co_filename in files:
                return source_line(frame)
            frame = frame.f_back
        return ""

    def _switch(self, agent: ThreadAgent) -> None:
        if self.aborted:
            raise ExecutionAborted()
        # _pick, inlined (and inlined in turn in yield_point).
        self.scheduling = True
        try:
            chosen = self._take_steps(agent)
        except TraceDivergence as divergence:
            self.diverge(str(divergence))
            chosen = None
        finally:
            self.scheduling = False
        if chosen is agent:
            return
        if chosen is None:
            # The run is over (a bug, a limit, or only daemons left) while this
            # agent still had work: unwind it.
            raise ExecutionAborted()
        host = self._host
        if host is not None:
            host.switch(agent, chosen)
        else:
            self._hand_to(chosen)
            agent.park()
        if self.aborted:
            raise ExecutionAborted()
        if self.on_resume is not None:
            self.on_resume(agent)

    def _hand_to(self, chosen: ThreadAgent) -> None:
        if self._host is not None:
            self._host.finished_with(chosen)  # only a finishing agent hands over this way
            return
        if not chosen.started:
            chosen.launch()
        chosen.resume()

    def _pick(self, current: ThreadAgent | None) -> ThreadAgent | None:
        """Take steps until a thread agent is chosen; ``None`` when the run is over."""
        self.scheduling = True
        try:
            return self._take_steps(current)
        finally:
            self.scheduling = False

    def _take_steps(self, current: ThreadAgent | None) -> ThreadAgent | None:
        limits = self.limits
        while True:
            if self.aborted:
                return None
            # The agents that can take a step, and those whose timed wait may expire. Expiring waits
            # come after the enabled agents in the choice offered to the chooser, so "the first
            # option" never gives up on a wait. Inlined: it runs at every step.
            readiness = self.readiness
            if not readiness.live:  # no live (non-daemon) agent is left
                self._complete()
                return None
            enabled, expiring = readiness.scan()
            self._deadlines = False
            if expiring:
                expiring = self._may_expire(enabled, expiring)
            runnable = enabled + [agent.id for agent in expiring] if expiring else enabled
            if not runnable:
                if readiness.broken_promises(self.active):
                    continue
                self.fail(self._deadlock_bug())
                return None
            step = self.step = self.step + 1
            if step > limits.max_steps:
                self.fail(self._livelock_bug())
                return None
            if step > self.fairness.unfair_steps:
                if self._livelock.stuck(
                    self.history, enabled, [self.agents[i].pending for i in enabled], self._deadlines, self.clock.reads
                ):
                    self.fail(self._livelock_bug())
                    return None
                if len(runnable) > 1:
                    enabled, expiring = self._fair(enabled, expiring, step)
                    runnable = enabled + [agent.id for agent in expiring] if expiring else enabled
            # The agent that switched away goes on only if it can: a wait that
            # may expire is not "continuing" (choosing another is no preemption).
            going_on = current.id if current is not None and current.id in enabled else None
            options = len(runnable)
            asks = self._asks
            if options == 1:
                index = 0
            elif asks is not None:
                # The chooser asked straight away, the choice recorded below as a tuple (RecordingChooser).
                if self._sees_operations:
                    index = asks(
                        runnable,
                        going_on,
                        step,
                        [self.agents[i].pending for i in enabled] + [a.waiting.expiry for a in expiring],  # type: ignore[union-attr]
                        self.history,
                    )
                else:
                    index = asks(runnable, going_on, step)
            elif self._sees_operations:
                index = self.chooser.next_agent_seeing(
                    runnable,
                    going_on,
                    self.step,
                    [self.agents[i].pending for i in enabled] + [a.waiting.expiry for a in expiring],  # type: ignore[union-attr]
                    self.history,
                    lambda i: self.describe(self.agents[runnable[i]], i >= len(enabled)),
                )
            else:
                index = self.chooser.next_agent(
                    runnable, going_on, self.step, lambda i: self.describe(self.agents[runnable[i]], i >= len(enabled))
                )
            chosen = self.agents[runnable[index]]
            operation = chosen.pending
            if index >= len(enabled):
                wait: Wait = chosen.waiting  # type: ignore[assignment]
                wait.timed_out = True
                operation = wait.expiry  # type: ignore[assignment]
                # Before its deadline: the agents that could run were stalled until then.
                self.clock.stall_until(wait.deadline, step, chosen.name)  # type: ignore[arg-type]
            if chosen._waiting is not None:
                chosen.waiting = None
            self.fairness.last_ran[chosen.id] = step
            self.clock.now += step_cost(operation.kind)
            if asks is not None and options > 1:
                # What the choice chose (agent_choice in dnsse.engine.choices): the frame of the
                # program where the agent stands, found as _where finds it; its line is read later.
                frame = chosen.frame
                files = self.source_files
                while frame is not None:
                    code = frame.f_code
                    if code.co_filename in files:
                        self._records((options, index, chosen.name, operation.kind, code, frame.f_lasti))  # type: ignore[misc]
                        break
                    frame = frame.f_back
                else:
                    self._records((options, index, chosen.name, operation.kind, None, -1))  # type: ignore[misc]
            self.history.append((chosen.id, operation))
            observers = self.step_observers
            if observers:
                for observer in observers:
                    observer(chosen, operation)
            if self.aborted:
                return None
            if isinstance(chosen, StepAgent):
                self._run_step(chosen)
                continue
            return chosen  # type: ignore[return-value]

    def _may_expire(self, enabled: list[int], timed: list[Agent]) -> list[Agent]:
        """Of the agents in timed waits, those whose wait may expire at this step, by the clock and the delay budget.

        With no agent able to run, time first jumps to the earliest deadline.
        """
        clock = self.clock
        deadlines = [(agent._waiting.deadline, agent) for agent in timed]  # type: ignore[union-attr]
        deadlines = [(deadline, agent) for deadline, agent in deadlines if deadline is not None]
        if not deadlines:
            return []
        self._deadlines = True
        if not enabled:
            clock.advance_to(min(deadline for deadline, _ in deadlines))
        reach = clock.reach()
        return [agent for deadline, agent in deadlines if deadline <= reach]

    def _fair(self, enabled: list[int], expiring: list[Agent], step: int) -> tuple[list[int], list[Agent]]:
        """Past the unfair prefix: only the agent owed a step, if one is (dnsse.engine.fairness).

        Agents whose deadline has passed are owed steps as well; a stall, giving
        up on a deadline not yet reached, never is.
        """
        now = self.clock.now
        due = [agent for agent in expiring if agent._waiting.deadline <= now]  # type: ignore[union-attr, operator]
        candidates = enabled + [agent.id for agent in due]
        owed = self.fairness.owed(candidates, step)
        if owed is None:
            return enabled, expiring
        if owed < len(enabled):
            return [enabled[owed]], []
        return [], [due[owed - len(enabled)]]

    def _run_step(self, agent: StepAgent) -> None:
        try:
            outcome = agent.step()
        except TraceDivergence as divergence:
            self.diverge(str(divergence))
            return
        except ExecutionAborted:
            return
        except NotUnderControl as error:
            self.refuse(error.message)
            return
        except InputRejected as error:
            self.reject(f"{agent.name}: {error}")
            return
        except Exception as error:  # noqa: BLE001 - a failing transfer is a finding
            self.fail(
                Bug(
                    BugKind.EXCEPTION,
                    f"{type(error).__name__}: {error}",
                    details=["".join(traceback.format_exception(error)).rstrip()],
                    agent=agent.name,
                    step=self.step,
                )
            )
            return
        if outcome is FINISHED:
            self._leave(agent)
        else:
            agent.waiting = outcome  # type: ignore[assignment]

    # ------------------------------------------------------------ agent exits
    def agent_finished(self, agent: ThreadAgent) -> None:
        self._leave(agent)
        if self.aborted:
            return
        try:
            chosen = self._pick(None)
        except TraceDivergence as divergence:
            self.diverge(str(divergence))
            return
        except ExecutionAborted:
            return
        if chosen is not None:
            self._hand_to(chosen)

    def agent_raised(self, agent: ThreadAgent, error: BaseException) -> None:
        if agent in self.active:
            self._leave(agent)
        agent.done = True
        if isinstance(error, TraceDivergence):
            self.diverge(str(error))
            return
        if isinstance(error, NotUnderControl):
            self.refuse(error.message)
            return
        if isinstance(error, InputRejected):
            self.reject(f"{agent.name}: {error}")
            return
        self.fail(
            Bug(
                BugKind.EXCEPTION,
                f"{type(error).__name__}: {error}" if str(error) else type(error).__name__,
                details=[format_user_traceback(error, self.source_files)],
                agent=agent.name,
                step=self.step,
            )
        )

    # ------------------------------------------------------------- the outcome
    def fail(self, bug: Bug) -> None:
        """Record the first bug and stop the execution."""
        if self.aborted:
            return
        if bug.step is None:
            bug.step = self.step
        self.bug = bug
        self.aborted = True
        self._finished.release()

    def report_after_run(self, bug: Bug) -> None:
        """A bug found by the end-of-run checks of a framework."""
        if self.bug is None and self.divergence is None:
            bug.step = self.step if bug.step is None else bug.step
            self.bug = bug

    def reject(self, why: str) -> None:
        """The program rejected its input: stop, judging nothing."""
        if self.aborted:
            return
        self.rejection = why
        self.aborted = True
        self._finished.release()

    def diverge(self, why: str) -> None:
        if self.aborted:
            return
        self.divergence = why
        self.aborted = True
        self._finished.release()

    def refuse(self, why: str) -> None:
        """The program called an API dnsse does not control: stop; the campaign ends with exit 2."""
        if self.aborted:
            return
        self.refusal = why
        self.aborted = True
        self._finished.release()

    def break_down(self, error: BaseException) -> None:
        """dnsse itself failed in this run (not the program): stop; the run must never count as a pass."""
        if self.failure is None:
            self.failure = "".join(traceback.format_exception(error)).rstrip()
        self.aborted = True
        if self._finished.locked():  # not yet released by an outcome (a run may fail after it completed)
            self._finished.release()

    def give_up(self) -> None:
        """The wall-clock limit passed with an agent away from every scheduling point.

        Blocked in a call dnsse does not control, it is a ``hang`` bug (see
        :mod:`dnsse.engine.hang`); still computing, the run is inconclusive.
        """
        if self.aborted:
            return
        running = self._running_agent()
        ident = running.thread_ident if running is not None else None
        # An agent still parked when its turn came is not blocked by the program: the turn was on its way
        # to it from dnsse's own code, which was still working (it may use no CPU while the OS runs another).
        if ident is not None and blocked_in_the_kernel(ident) and not running.parked():  # type: ignore[union-attr]
            self.stuck = running
            where = self._innermost(running) or "a call outside the program"  # type: ignore[arg-type]
            self.bug = Bug(
                BugKind.HANG,
                f"{running.name} is blocked in a call dnsse does not control ({where}), past the "  # type: ignore[union-attr]
                f"{self.limits.max_seconds:g}s --execution-timeout, and no other agent can run: the program hangs",
                details=self._standing(),
                agent=running.name,  # type: ignore[union-attr]
                step=self.step,
            )
            self.aborted = True
            return
        self.inconclusive = Inconclusive(
            f"the execution ran longer than {self.limits.max_seconds:g}s (--execution-timeout) without "
            f"coming back to a scheduling point, after {self.step} steps: an agent still computes (it is not "
            "blocked), so a longer --execution-timeout decides whether it ends",
            details=self._standing(),
        )
        self.aborted = True

    def _running_agent(self) -> ThreadAgent | None:
        """The thread agent that has the turn (the latest chosen), if it is one that started."""
        if not self.history:
            return None
        agent = self.agents[self.history[-1][0]]
        return agent if isinstance(agent, ThreadAgent) and agent.started and not agent.done else None

    def _standing(self) -> list[str]:
        """Where each unfinished agent stood: its last scheduling point, and where its thread is now."""
        running = self.history[-1][0] if self.history else None
        lines = []
        for agent in self.thread_agents():
            if agent.done:
                continue
            if not agent.started:
                lines.append(f"{agent.name}: not started")
                continue
            last = agent.pending.kind if agent.pending is not None else "start"
            at = self._where(agent.frame)
            stood = f"{agent.name}: last scheduling point {last}" + (f" at {at}" if at else "")
            if agent.id == running:
                now = self._location_of(agent)
                inside = self._innermost(agent)
                stood += "; running since, never came back: now" + (f" at {now}" if now else " outside the program")
                if inside and inside != now:
                    stood += f", inside {inside}"
            elif agent.waiting is not None and not agent.waiting.ready():
                stood += f", waiting for {agent.waiting.describe()}"
            elif agent.waiting is not None:
                # Its wait is over; it only lacked the turn the running agent never gave back.
                stood += f", ready to go on: {agent.waiting.describe()}"
            lines.append(stood)
        return lines

    @staticmethod
    def _innermost(agent: ThreadAgent) -> str | None:
        """The innermost Python frame of ``agent`` (a C call below it does not show)."""
        frame = agent.current_frame()
        if frame is None:
            return None
        return f"{frame_location(frame)} in {frame.f_code.co_name}"

    def _complete(self) -> None:
        if self.aborted or self.completed:
            return
        self.completed = True
        self._finished.release()

    def _deadlock_bug(self) -> Bug:
        blocked = [a for a in self.active if not a.done]
        for explain in self.deadlock_explainers:
            bug = explain(blocked)
            if bug is not None:
                return bug
        details = []
        for agent in blocked:
            if agent.daemon and isinstance(agent, StepAgent):
                continue
            reason = agent.waiting.describe() if agent.waiting is not None else "nothing"
            where = self._location_of(agent)
            details.append(f"{agent.name} waits for {reason}" + (f" at {where}" if where else ""))
        names = ", ".join(a.name for a in blocked if not isinstance(a, StepAgent))
        return Bug(BugKind.DEADLOCK, f"every live agent is blocked ({names})", details=details)

    def _location_of(self, agent: Agent) -> str | None:
        if not isinstance(agent, ThreadAgent):
            return None
        frame = agent.current_frame()
        while frame is not None:
            if frame.f_code.co_filename in self.source_files:
                return f"{frame_location(frame)} in {frame.f_code.co_name}"
            frame = frame.f_back
        return None

    def _livelock_bug(self) -> Bug:
        """The step limit, reached under fair scheduling: who kept taking steps, and who never could."""
        limits = self.limits
        window = self.history[-min(len(self.history), LIVELOCK_WINDOW):]
        early = self.step <= limits.max_steps
        taken: dict[int, int] = {}
        for agent_id, _ in window:
            taken[agent_id] = taken.get(agent_id, 0) + 1
        details = []
        for agent in self.thread_agents():
            if agent.done:
                continue
            where = self._location_of(agent)
            at = f" at {where}" if where else ""
            steps = taken.get(agent.id, 0)
            if steps:
                details.append(f"{agent.name} kept running: {steps:,} of the last {len(window):,} steps{at}")
            elif agent.waiting is not None and not agent.waiting.ready():
                details.append(f"{agent.name} took none of them: it waits for {agent.waiting.describe()}{at}")
            else:
                details.append(f"{agent.name} took none of them{at}")
        if early:
            message = (
                f"livelock: under fair scheduling, for the last {SPIN_STEPS:,} steps every agent that could run "
                "went round a loop that changes nothing, and no agent waits for time"
            )
        else:
            fair = "" if limits.unfair_steps >= limits.max_steps else " under fair scheduling"
            message = (
                f"the execution took more than {limits.max_steps:,} steps{fair}: a livelock (agents keep running "
                "without the program getting anywhere) or a very long run (a larger --max-steps decides it)"
            )
        return Bug(BugKind.TIMEOUT, message, details=details)

    # --------------------------------------------------------------- the run
    def run(self) -> None:
        """Run the registered agents to the end, a bug, or a limit."""
        self.started_at = time.perf_counter()
        recorder = self.chooser
        if recorder.fast_agent_choices():
            inner = recorder.inner
            self._asks = inner.next_agent_seeing if self._sees_operations else inner.next_agent  # type: ignore[attr-defined]
            self._records = recorder.made.append
        if agents_share_a_thread(self.greenlets_allowed):
            self._host = GreenletHost(self)
            self._host.run()
            self.elapsed_s = time.perf_counter() - self.started_at
            self.aborted = True
            return
        chosen = self.first_agent()
        if chosen is not None:
            self._hand_to(chosen)
        if not acquire_within(self._finished, self.limits.max_seconds):
            self.give_up()
        self.elapsed_s = time.perf_counter() - self.started_at
        self._unwind()

    def abandoned(self) -> list[ThreadAgent]:
        """The agents that did not stop when the run ended: they spin or block outside every scheduling point.

        Agents sharing one OS thread that one of them holds cannot be unwound
        either; only the one that holds it is named, as on threads of their own.
        """
        stuck = [agent for agent in self.thread_agents() if agent.started and agent.exited.locked()]
        if self._host is None:
            return stuck
        return [agent for agent in stuck if agent.greenlet and agent.greenlet.gr_frame is None]  # type: ignore[attr-defined]

    def first_agent(self) -> ThreadAgent | None:
        """The first thread agent to run (after any step agents' steps); ``None`` when the run is already over."""
        try:
            return self._pick(None)
        except TraceDivergence as divergence:
            self.diverge(str(divergence))
        except ExecutionAborted:
            pass
        return None

    def _unwind(self) -> None:
        """Let every parked agent raise ExecutionAborted and exit, one at a time."""
        self.aborted = True
        deadline = time.perf_counter() + self.limits.unwind_seconds
        for agent in self.thread_agents():
            if not agent.started or not agent.exited.locked() or agent is self.stuck:
                continue
            try:
                agent.resume()
            except RuntimeError:
                pass  # already handed the baton; it is on its way out
            remaining = max(0.0, deadline - time.perf_counter())
            if acquire_within(agent.exited, remaining):
                agent.exited.release()


def format_user_traceback(error: BaseException, source_files: frozenset[str]) -> str:
    """The traceback of ``error``, starting at the first frame of the program under test."""
    frames = traceback.extract_tb(error.__traceback__)
    first = next((i for i, f in enumerate(frames) if f.filename in source_files), 0)
    lines = ["Traceback (most recent call last):\n"]
    lines.extend(traceback.format_list(frames[first:]))
    lines.extend(traceback.format_exception_only(type(error), error))
    return "".join(lines).rstrip()
