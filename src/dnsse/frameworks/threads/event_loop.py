"""A controlled asyncio event loop: every task is an agent, and time is virtual.

``asyncio.run``, ``new_event_loop`` and ``get_event_loop`` called by an agent
give a :class:`ControlledLoop` (see :mod:`.patching`). asyncio's own futures,
tasks, ``Lock``, ``Event``, ``Condition``, ``Semaphore``, ``Queue``,
``wait_for``, ``gather`` and ``TaskGroup`` are pure bookkeeping on top of a
loop's ``call_soon`` and ``call_at``, so they all run unchanged; only the loop
is replaced:

- Each asyncio task gets an agent of its own. The callbacks that step a task
  (``__step``, ``__wakeup``) go to that agent, which runs them when the
  scheduler picks it. So when several tasks are ready at once, which one goes
  first is a scheduling choice, and a race across an ``await`` is explored as
  a race between threads is.
- The agent that runs the loop (the caller of ``asyncio.run``) runs the other
  callbacks (future callbacks, ``call_soon`` of plain functions) and fires
  timers.
- At most one of them runs at a time, as on one real loop: the others wait
  for the loop to be free. A task switch happens only at an ``await`` that
  suspends.
- Time is the execution's virtual clock (shared with ``time.monotonic``).
  Timers fire in time order when their time has come, or when no agent of
  the execution can run (the loop then jumps to its earliest timer), so
  ``sleep`` and ``wait_for`` take no real time at all, and a timeout fires
  exactly when the program's own sleeps say it does. (Timed waits of
  threads, by contrast, may expire at any point: what they wait for may be
  slow for reasons the program does not state.) A task that polls
  (``while not done: await asyncio.sleep(0)``) and has gone round twice
  with nothing else of the loop running lets the loop's other ready work go
  first, as ``sleep(0)`` does on a real loop, and waits for time to pass,
  as there each round takes some: once nothing but such tasks can go on,
  the loop fires its next timer before their next round, and with no timer
  each of their rounds takes a little virtual time (``runtime.spin_cost``),
  so ``while loop.time() < end: await asyncio.sleep(0)`` ends.

A loop whose every task waits for something no one will do is a deadlock,
reported with where each task awaits.

Servers and connections run over the execution's loopback network
(:mod:`.aio_network`); the loop's other I/O (subprocesses, pipes, raw
sockets, signals) is not under control (:mod:`.aio_refusals`).

Frameworks build on it: :meth:`ControlledLoop.watch` turns a condition that
other agents make true (a Ray ref filled) into a future of the loop,
``on_task_agent`` lets them say whom a task's agent works for, and
:meth:`ControlledLoop.abandon` drops a loop whose process died.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import os
from asyncio import events
from typing import Any, Callable

from dnsse.engine.agent import ThreadAgent, Wait
from dnsse.engine.execution import ExecutionAborted, current_agent
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.threads.aio_network import LoopbackNetworking
from dnsse.frameworks.threads.aio_refusals import RefusedIO
from dnsse.frameworks.threads.inheritance import captured, restore, snapshot
from dnsse.frameworks.threads.runtime import MONOTONIC_BASE, runtime_for, spin_cost
from dnsse.frameworks.threads.shared_state import traced

_TASK_TYPES: tuple[type, ...] = tuple({asyncio.Task, asyncio.tasks._PyTask})  # type: ignore[attr-defined]
_THREADS_PLAN = object()
# Virtual times are sums of the program's delays; a timer is due within this much.
_RESOLUTION = 1e-9
# A task that polls (yields bare) this many rounds in a row with nothing else of its loop running spins.
_SPIN_ROUNDS = 2


class ControlledLoop(LoopbackNetworking, RefusedIO, asyncio.BaseEventLoop):
    """The event loop of one agent of an execution; created by the controlled policy."""

    def __init__(
        self,
        owner: ThreadAgent,
        on_task_agent: Callable[[ThreadAgent, asyncio.Task], None] | None = None,
        plan: Any = _THREADS_PLAN,
    ) -> None:
        super().__init__()
        self._owner = owner
        self._on_task_agent = on_task_agent
        self._execution = owner.execution
        self._runtime = runtime_for(owner.execution)
        # Whose reads and writes of shared state are scheduling points in the tasks
        # (a SharedStatePlan, None: none); by default the threads program's plan.
        self._plan = self._runtime.plan if plan is _THREADS_PLAN else plan
        number = self._runtime.number("EventLoop")
        self._object = f"loop#{number}"
        self._clock_resolution = _RESOLUTION
        # Who runs a callback of this loop right now (at most one, as on a real loop).
        self._busy: ThreadAgent | None = None
        self._task_handles: dict[asyncio.Task, collections.deque] = {}
        # The task of each task agent (by agent id): see spinning().
        self._agent_tasks: dict[int, asyncio.Task] = {}
        # Steps of this loop that were not a polling task's round, and for each polling task the
        # count when it last stepped and its rounds in a row with no such step between (see _spins).
        self._progress = 0
        self._rounds: dict[asyncio.Task, tuple[int, int]] = {}
        # Futures of this loop completed when a condition outside it holds (see watch).
        self._watched: dict[asyncio.Future, Callable[[], bool]] = {}
        self._abandoned = False
        # An agent that takes the steps of the task being created itself (see adopted_task).
        self._adopting: ThreadAgent | None = None
        # The loop thread's thread-local state (torch's grad mode), as its latest callback left it:
        # every callback runs in that one thread on a real loop, whichever agent runs it here.
        self._thread_state = snapshot()

    def watch(self, ready: Callable[[], bool]) -> asyncio.Future:
        """A future that the loop completes once ``ready()`` holds (checked at every step).

        A task that awaits it completes it itself when it next runs, so an
        ``await`` of it costs the task's own steps only; the loop's agent
        completes the others.
        """
        future = self.create_future()
        if ready():
            future.set_result(None)
        else:
            self._watched[future] = ready
        return future

    def _complete_watched(self, future: Any) -> bool:
        ready = self._watched.get(future)
        if ready is None or not ready():
            return False
        del self._watched[future]
        if not future.done():
            future.set_result(None)
        return True

    def _watched_ready(self, future: Any) -> bool:
        ready = self._watched.get(future)
        return ready is not None and ready()

    def adopted_task(self, agent: ThreadAgent, coroutine: Any) -> asyncio.Task:
        """A task of ``coroutine`` whose steps ``agent`` takes itself, by :meth:`take_steps`.

        The same as a task with an agent of its own, one agent and its steps
        fewer: what a Ray async actor's call uses for its coroutine.
        """
        self._adopting = agent
        try:
            return self.create_task(coroutine)
        finally:
            self._adopting = None

    def take_steps(self, agent: ThreadAgent, task: asyncio.Task) -> None:
        """Run an adopted task to its end (or until the loop is abandoned) in ``agent``."""
        previous = events._get_running_loop()
        try:
            self._run_task(agent, task, self._task_handles[task], picked=False)
        finally:
            events._set_running_loop(previous)

    def run_exclusive(self, agent: ThreadAgent, function: Callable[[], Any]) -> Any:
        """Run plain code on the loop, as a synchronous method of an async actor runs: nothing else of it runs meanwhile."""
        self._execution.block(
            agent, Wait(lambda: self._busy is None, lambda: f"its event loop ({self._object}) to be free"),
            self._step_operation(agent.name),
        )
        self._busy = agent
        restore(self._thread_state)
        try:
            return function()
        finally:
            self._thread_state = snapshot()
            self._busy = None

    def abandon(self) -> None:
        """The process running the loop died: nothing of it runs again; its tasks' agents end."""
        self._abandoned = True
        self._stopping = True
        self._ready.clear()
        self._scheduled.clear()
        self._watched.clear()
        for handles in self._task_handles.values():
            handles.clear()

    # --------------------------------------------------------------- clock
    def time(self) -> float:
        return MONOTONIC_BASE + self._runtime.elapsed

    def _timer_due(self) -> bool:
        return bool(self._scheduled) and self._scheduled[0].when() <= self.time() + _RESOLUTION

    def create_task(self, coro: Any, *, name: str | None = None, context: Any = None) -> asyncio.Task:
        """As asyncio's; an unnamed task is numbered per execution (``Task-1`` first), not per process."""
        if name is None:
            name = f"Task-{self._runtime.number('asyncio.Task name')}"
        return super().create_task(coro, name=name, context=context)

    # ----------------------------------------------------- routing callbacks
    def _call_soon(self, callback: Any, args: Any, context: Any) -> asyncio.Handle:
        task = getattr(callback, "__self__", None)
        if not isinstance(task, _TASK_TYPES) or task.get_loop() is not self:
            return super()._call_soon(callback, args, context)
        handle = events.Handle(callback, args, self, context)
        handles = self._task_handles.get(task)
        if handles is None:
            handles = self._task_handles[task] = collections.deque()
            if self._adopting is None:
                self._start_task_agent(task, handles)
        handles.append(handle)
        return handle

    def default_exception_handler(self, context: dict) -> None:
        """As asyncio's, except for what the end of an execution causes.

        A run that ends (the program returned while tasks still waited, as
        when a Ray job ends, or dnsse cut it short) leaves tasks pending and
        unwinds agents: neither is the program's doing, so neither is logged.
        """
        if isinstance(context.get("exception"), ExecutionAborted):
            return
        if context.get("message", "").startswith("Task was destroyed but it is pending"):
            return
        super().default_exception_handler(context)

    def _write_to_self(self) -> None:
        """``call_soon_threadsafe`` needs no wake-up: waits are re-tested at every step."""

    def _process_events(self, event_list: list) -> None:
        """No selector: connections deliver through callbacks (:mod:`.aio_network`); other I/O is refused."""

    @property
    def owner(self) -> ThreadAgent:
        """The agent that runs this loop: its tasks act for it."""
        return self._owner

    # ------------------------------------------------------------ task agents
    def _start_task_agent(self, task: asyncio.Task, handles: collections.deque) -> None:
        coroutine = task.get_coro()
        what = getattr(coroutine, "__name__", None) or type(coroutine).__name__
        label = f"Task-{self._runtime.number('asyncio.Task')} ({what})"
        # Created in the thread that creates the task, which stands for the loop's thread.
        agent = ThreadAgent(
            self._execution, label, lambda: self._run_task(agent, task, handles), daemon=True, on_start=captured()
        )
        # A task runs in its loop's thread: current_thread() and get_ident() name that thread.
        self._runtime.attach(agent, self._runtime.handle_of(self._owner))
        self._agent_tasks[agent.id] = task
        if self._on_task_agent is not None:
            self._on_task_agent(agent, task)
        agent.pending = self._step_operation(label)
        agent.waiting = self._task_wait(agent, task, handles)

    def _run_task(
        self, agent: ThreadAgent, task: asyncio.Task, handles: collections.deque, picked: bool = True
    ) -> None:
        """Take the task's steps, waiting between them as a task waits for its next wake-up.

        ``picked``: the scheduler picked the agent with a step ready (its
        first wait was its start); otherwise it waits for the first step too.
        """
        events._set_running_loop(self)
        with traced(agent, self._plan):
            if not picked:
                self._wait_for_step(agent, task, handles)
            while True:
                if self._abandoned:
                    # Its process died: the coroutine is closed here, in its own agent, not by the collector.
                    _close_quietly(task)
                    return
                # Woken by what it awaits outside the loop: its wake-up is queued now.
                self._complete_watched(getattr(task, "_fut_waiter", None))
                self._count_round(task)
                self._busy = agent
                restore(self._thread_state)
                try:
                    handles.popleft()._run()
                finally:
                    self._thread_state = snapshot()
                    self._busy = None
                if task.done() and not _has_live(handles):
                    self._task_handles.pop(task, None)
                    self._agent_tasks.pop(agent.id, None)
                    self._rounds.pop(task, None)
                    return
                self._wait_for_step(agent, task, handles)

    def _wait_for_step(self, agent: ThreadAgent, task: asyncio.Task, handles: collections.deque) -> None:
        try:
            self._execution.block(agent, self._task_wait(agent, task, handles), self._step_operation(agent.name))
        except ExecutionAborted:
            # The run is over with the task suspended: close it now, in its agent,
            # while its loop still works, not later in the garbage collector.
            _close_quietly(task)
            raise

    def _task_wait(self, agent: ThreadAgent, task: asyncio.Task, handles: collections.deque) -> Wait:
        """A task goes on when its next callback is ready and the loop is free (and, if it polls, time passed)."""
        return Wait(
            lambda: self._abandoned or (
                self._busy is None
                and (_has_live(handles) or self._watched_ready(getattr(task, "_fut_waiter", None)))
                and not (self._spins(task) and self._others_first(task))
            ),
            lambda: _awaiting(task, self._execution.source_files),
        )

    def _step_operation(self, label: str) -> Operation:
        # Every step of a loop's tasks touches the loop: steps of one loop never commute.
        return Operation("asyncio.step", ((self._object, Access.SYNC),), label)

    # ------------------------------------------------------- the loop's agent
    def _run_once(self) -> None:
        agent = current_agent()
        if agent is None or agent.execution is not self._execution:
            raise RuntimeError("a dnsse event loop runs only in the agent of the execution that created it")
        self._drop_cancelled_timers()
        self._execution.block(
            agent, _IdleLoopWait(self), Operation("asyncio.loop", ((self._object, Access.SYNC),), self._object)
        )
        if not self._loop_may_run():
            # Woken because nothing else can run: time jumps to the earliest timer.
            self._drop_cancelled_timers()
            if self._scheduled:
                self._runtime.advance_to(self._scheduled[0].when() - MONOTONIC_BASE)
        self._busy = agent
        self._progress += 1
        # The loop's own thread: what the program sees there after asyncio.run is what the tasks left.
        restore(self._thread_state)
        try:
            for future in self._watched_by_no_task():
                self._complete_watched(future)
            while self._timer_due():
                timer = heapq.heappop(self._scheduled)
                timer._scheduled = False
                if not timer._cancelled:
                    self._call_soon(timer._callback, timer._args, timer._context)
            for _ in range(len(self._ready)):
                handle = self._ready.popleft()
                if not handle._cancelled:
                    handle._run()
        finally:
            self._thread_state = snapshot()
            self._busy = None

    def _loop_may_run(self) -> bool:
        return self._busy is None and (
            bool(self._ready) or self._stopping or self._timer_due()
            or any(self._watched_ready(future) for future in self._watched_by_no_task())
        )

    def _watched_by_no_task(self) -> list:
        if not self._watched:
            return []
        awaited = {getattr(task, "_fut_waiter", None) for task in self._task_handles}
        return [future for future in self._watched if future not in awaited]

    def _drop_cancelled_timers(self) -> None:
        while self._scheduled and self._scheduled[0]._cancelled:
            heapq.heappop(self._scheduled)._scheduled = False
        self._timer_cancelled_count = 0

    def spinning(self, agent: ThreadAgent) -> bool:
        """Whether ``agent`` is a task of this loop that polls (``asyncio.sleep(0)``) round after round.

        It waits for something to change, time included: see ``_spins``.
        """
        task = self._agent_tasks.get(agent.id)
        return task is not None and self._spins(task)

    def _count_round(self, task: asyncio.Task) -> None:
        if not _polls(task):
            self._progress += 1
            self._rounds.pop(task, None)
            return
        at, rounds = self._rounds.get(task, (-1, 0))
        rounds = rounds + 1 if at == self._progress else 0
        self._rounds[task] = (self._progress, rounds)
        if rounds >= _SPIN_ROUNDS and not self._scheduled and _idle(self):
            # It waits for time itself (``while loop.time() < end``): each round takes some, as on a real loop.
            self._runtime.advance_to(self._runtime.elapsed + spin_cost(rounds - _SPIN_ROUNDS + 1))

    def _spins(self, task: asyncio.Task) -> bool:
        """Whether ``task`` polls and went round twice already with nothing else of the loop running."""
        if not _polls(task):
            return False
        at, rounds = self._rounds.get(task, (-1, 0))
        return at == self._progress and rounds >= _SPIN_ROUNDS

    def _others_first(self, task: asyncio.Task) -> bool:
        """Whether a task that spins waits: the loop's other work is ready, or its timers are all that can go on."""
        if self._ready:
            return True
        for other, handles in self._task_handles.items():
            if other is not task and _has_live(handles) and not self._spins(other):
                return True
        return bool(self._scheduled) and _idle(self)

    def _describe_loop(self) -> str:
        tasks = [task for task in self._task_handles if not task.done()]
        if not tasks:
            return f"its event loop ({self._object}) to have work"
        return f"its event loop's tasks ({len(tasks)} pending, none can go on)"

    def close(self) -> None:
        super().close()
        for handles in self._task_handles.values():
            handles.clear()
        self._task_handles.clear()


class _IdleLoopWait(Wait):
    """The loop's agent goes on when it has work, or when it has a timer and nothing else can run."""

    __slots__ = ()

    def __init__(self, loop: ControlledLoop) -> None:
        super().__init__(lambda: loop._loop_may_run() or (bool(loop._scheduled) and _idle(loop)), loop._describe_loop)


def _idle(loop: ControlledLoop) -> bool:
    """No agent of the execution can go on (idle loops, and the loop's tasks that spin, aside)."""
    for agent in loop._execution.active:
        waiting = agent.waiting
        if agent is loop._owner or agent.done or isinstance(waiting, _IdleLoopWait) or loop.spinning(agent):
            continue
        if waiting is None or waiting.ready():
            return False
    return True


def _polls(task: asyncio.Task) -> bool:
    if task.done() or getattr(task, "_fut_waiter", None) is not None:
        return False
    return bool(getattr(task.get_coro(), "cr_suspended", False))


def _close_quietly(task: asyncio.Task) -> None:
    try:
        task.get_coro().close()
    except BaseException:  # noqa: BLE001 - its cleanup ran into the end of the run; nothing is left to tell
        pass


def _has_live(handles: collections.deque) -> bool:
    while handles and handles[0]._cancelled:
        handles.popleft()
    return bool(handles)


def _awaiting(task: asyncio.Task, source_files: frozenset[str]) -> str:
    """What a suspended task awaits (``Event.wait()``), and where in the program."""
    frames = _await_chain(task.get_coro())
    if not frames:
        return "its next wake-up"
    innermost = frames[-1]
    what = f"{innermost.f_code.co_qualname}()"
    mine = [frame for frame in frames if frame.f_code.co_filename in source_files]
    if not mine:
        return what
    where = mine[-1]
    return f"{what} at {os.path.basename(where.f_code.co_filename)}:{where.f_lineno} in {where.f_code.co_name}"


def _await_chain(coroutine: Any) -> list:
    """The frames of a suspended coroutine and of what it awaits, outermost first."""
    frames = []
    while coroutine is not None:
        frame = getattr(coroutine, "cr_frame", None) or getattr(coroutine, "gi_frame", None)
        if frame is not None:
            frames.append(frame)
        coroutine = getattr(coroutine, "cr_await", None) or getattr(coroutine, "gi_yieldfrom", None)
    return frames


class ControlledPolicy(asyncio.DefaultEventLoopPolicy):
    """Gives agents a controlled loop; every other thread gets a real one, as before."""

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        agent = current_agent()
        if agent is None:
            return super().new_event_loop()
        return ControlledLoop(agent)
