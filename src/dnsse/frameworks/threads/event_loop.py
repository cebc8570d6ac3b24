"""A controlled asyncio event loop: every task is an agent, and time is virtual.

``asyncio.run``, ``new_event_loop`` and ``get_event_loop`` called by an agent
give a :class:`ControlledLoop` (see :mod:`.patching`). asyncio's own futures,
tasks, ``Lock``, ``Event``, ``Condition``, ``Semaphore``, ``Queue``,
``wait_for``, ``gather`` and ``TaskGroup`` are pure bookkeeping on top of a
loop's ``call_soon`` and ``call_at``, so they all run unchanged; only the loop
is replaced:

- Each asyncio task gets an agent of its own. The callbacks that step a task
  (``__step``, ``__wakeup``) go to that agent, which runs them; the agent
  that runs the loop (the caller of ``asyncio.run``) runs the other
  callbacks (future callbacks, ``call_soon`` of plain functions) and fires
  timers. At most one of them runs at a time, as on one real loop, and a
  task switch happens only at an ``await`` that suspends.
- The loop's ready callbacks run first in, first out, as CPython's loop runs
  them: an agent may run a callback only when it is the next one in the
  loop's ready queue. So what happens inside one loop is what CPython does;
  the choices are what reaches the loop from outside: other threads and
  loops (a ``call_soon_threadsafe``, data on a connection, a Ray ref
  filled, which the loop takes in when the scheduler picks its agent),
  and timers against the clock (a due timer enters the queue at a step the
  scheduler chooses among the others). A race across an ``await``
  (check-then-act of two tasks) is still found: it needs no reordering.
- Time is the execution's virtual clock (:mod:`dnsse.engine.clock`, shared
  with ``time.monotonic``). Each step takes a little, so a task that polls
  (``while loop.time() < end: await asyncio.sleep(0)``) sees time pass; the
  loop waits for its earliest timer as a timed wait, so when nothing else
  can run time jumps to it, and within the delay budget the scheduler may
  stall the others so that it fires first. ``sleep`` and ``wait_for`` take
  no real time at all, and a timeout fires when the program's own sleeps
  and steps say it does.

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
from dnsse.frameworks.threads.runtime import MONOTONIC_BASE, runtime_for
from dnsse.frameworks.threads.shared_state import traced

_TASK_TYPES: tuple[type, ...] = tuple({asyncio.Task, asyncio.tasks._PyTask})  # type: ignore[attr-defined]
_THREADS_PLAN = object()
# Virtual times are sums of the program's delays; a timer is due within this much.
_RESOLUTION = 1e-9
# What the loop's ready queue holds when it is empty (None stands for a plain callback).
_EMPTY = object()


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
        # Each task's ready callbacks, in order; plain callbacks are in ``_ready``, as on asyncio's loop.
        self._task_handles: dict[asyncio.Task, collections.deque] = {}
        # Every task of this loop in the order it was created (a task's first callback is its start).
        self._created: dict[asyncio.Task, None] = {}
        # The loop's ready queue, first in first out: for each callback made ready, whose it is (its task,
        # or None for a plain one); the callback itself is the next one of that owner's queue.
        self._order: collections.deque = collections.deque()
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

        Something outside the loop makes it true: the loop's agent takes it in
        when the scheduler picks it, and the future's callbacks (a task's
        wake-up) join the ready queue then.
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
        self._order.clear()
        self._scheduled.clear()
        self._watched.clear()
        for handles in self._task_handles.values():
            handles.clear()

    # --------------------------------------------------------------- clock
    def time(self) -> float:
        """The execution's clock; read by the program in a loop, each read costs a little (``runtime.read_clock``)."""
        agent = current_agent()
        if agent is None or agent.execution is not self._execution or self._execution.scheduling:
            return MONOTONIC_BASE + self._runtime.elapsed
        return MONOTONIC_BASE + self._runtime.read_clock(agent)

    def _timer_due(self) -> bool:
        return bool(self._scheduled) and self._scheduled[0].when() <= MONOTONIC_BASE + self._runtime.elapsed + _RESOLUTION

    def create_task(self, coro: Any, *, name: str | None = None, context: Any = None) -> asyncio.Task:
        """As asyncio's; an unnamed task is numbered per execution (``Task-1`` first), not per process."""
        if name is None:
            name = f"Task-{self._runtime.number('asyncio.Task name')}"
        return super().create_task(coro, name=name, context=context)

    # ----------------------------------------------------- routing callbacks
    def _call_soon(self, callback: Any, args: Any, context: Any) -> asyncio.Handle:
        task = getattr(callback, "__self__", None)
        if not isinstance(task, _TASK_TYPES) or task.get_loop() is not self:
            self._order.append(None)
            return super()._call_soon(callback, args, context)
        handle = events.Handle(callback, args, self, context)
        handles = self._task_handles.get(task)
        if handles is None:
            self._created.setdefault(task, None)
            handles = self._task_handles[task] = collections.deque()
            if self._adopting is None:
                self._start_task_agent(task, handles)
        handles.append(handle)
        self._order.append(task)
        return handle

    def _head(self) -> Any:
        """Whose callback is next in the ready queue (a task, None for a plain one; ``_EMPTY``: none)."""
        order = self._order
        while order:
            owner = order[0]
            queue = self._ready if owner is None else self._task_handles.get(owner)
            if not queue:
                order.popleft()  # a task that ended with a cancelled callback left behind
                continue
            if queue[0]._cancelled:
                queue.popleft()
                order.popleft()
                continue
            return owner
        return _EMPTY

    def _take_head(self) -> asyncio.Handle:
        """Take the next callback of the ready queue (its owner checked by the caller)."""
        owner = self._order.popleft()
        return (self._ready if owner is None else self._task_handles[owner]).popleft()

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
                self._busy = agent
                restore(self._thread_state)
                try:
                    self._take_head()._run()
                finally:
                    self._thread_state = snapshot()
                    self._busy = None
                if task.done() and not _has_live(handles):
                    self._task_handles.pop(task, None)
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
        """A task goes on when its callback is the next one of the loop's ready queue and the loop is free."""
        return Wait(
            lambda: self._abandoned or (self._busy is None and self._head() is task),
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
        self._busy = agent
        # The loop's own thread: what the program sees there after asyncio.run is what the tasks left.
        restore(self._thread_state)
        try:
            # What arrived from outside, then the timers that are due, join the end of the ready queue.
            for future in list(self._watched):
                self._complete_watched(future)
            self._drop_cancelled_timers()
            while self._timer_due():
                timer = heapq.heappop(self._scheduled)
                timer._scheduled = False
                if not timer._cancelled:
                    self._call_soon(timer._callback, timer._args, timer._context)
            # The plain callbacks at the head of the queue, at most those ready now, as one round of
            # asyncio's loop runs them; a task's callback stops the round, its agent runs it.
            for _ in range(len(self._ready)):
                if self._head() is not None:
                    break
                self._take_head()._run()
        finally:
            self._thread_state = snapshot()
            self._busy = None

    def _loop_may_run(self) -> bool:
        return self._busy is None and (
            self._stopping or self._timer_due() or self._head() is None
            or any(ready() for ready in self._watched.values())
        )

    def _drop_cancelled_timers(self) -> None:
        while self._scheduled and self._scheduled[0]._cancelled:
            heapq.heappop(self._scheduled)._scheduled = False
        self._timer_cancelled_count = 0

    def next_timer(self) -> float | None:
        """Virtual time (seconds since the execution began) of the loop's earliest timer; None without one."""
        self._drop_cancelled_timers()
        return self._scheduled[0].when() - MONOTONIC_BASE if self._scheduled else None

    def _describe_loop(self) -> str:
        tasks = [task for task in self._task_handles if not task.done()]
        if not tasks:
            return f"its event loop ({self._object}) to have work"
        return f"its event loop's tasks ({len(tasks)} pending, none can go on)"

    def in_creation_order(self, tasks: set) -> set:
        """``tasks`` (of this loop) as a set that iterates in the order they were created; see ordered_all_tasks."""
        return _CreationOrdered(tasks, self._created)

    def close(self) -> None:
        super().close()
        self._created.clear()
        for handles in self._task_handles.values():
            handles.clear()
        self._task_handles.clear()


class _CreationOrdered(set):
    """A set of tasks that iterates in their order of creation.

    asyncio keeps its tasks in a WeakSet: ``all_tasks()`` iterates them in
    the order of their addresses in memory, which no schedule decides.
    ``asyncio.run`` cancels what is left in that order when the program's
    main coroutine ends, so the order of those cancellations, and of
    every step after, would change from one run of the same schedule to the
    next. Here it is the order of creation (unknown tasks last).
    """

    def __init__(self, tasks: set, created: dict) -> None:
        super().__init__(tasks)
        rank = {task: index for index, task in enumerate(created)}
        self._order = sorted(tasks, key=lambda task: rank.get(task, len(rank)))

    def __iter__(self) -> Any:
        return iter([task for task in self._order if task in self])


def ordered_all_tasks(original: Callable[..., set]) -> Callable[..., set]:
    """``asyncio.all_tasks`` whose answer for a controlled loop iterates in creation order."""

    def all_tasks(loop: Any = None) -> set:
        tasks = original(loop)
        if loop is None:
            try:
                loop = events.get_running_loop()
            except RuntimeError:
                return tasks
        return loop.in_creation_order(tasks) if isinstance(loop, ControlledLoop) else tasks

    return all_tasks


class _IdleLoopWait(Wait):
    """The loop's agent goes on when it has work; a timed wait for its earliest timer otherwise.

    Its deadline follows the loop's timers as they are added and cancelled,
    so time jumps to the earliest when nothing else can run.
    """

    __slots__ = ("loop",)

    def __init__(self, loop: ControlledLoop) -> None:
        super().__init__(loop._loop_may_run, loop._describe_loop)
        self.loop = loop
        self.expiry = Operation("asyncio.timer", ((loop._object, Access.SYNC),), f"{loop._object}: its next timer")

    @property  # type: ignore[override]
    def deadline(self) -> float | None:
        # A timer cannot fire while a callback of the loop runs (a task stopped at a point inside its step).
        return self.loop.next_timer() if self.loop._busy is None else None

    @deadline.setter
    def deadline(self, value: float | None) -> None:
        """The deadline is the loop's earliest timer's: nothing to set."""


def _close_quietly(task: asyncio.Task) -> None:
    try:
        task.get_coro().close()
    except BaseException:  # noqa: BLE001 - its cleanup ran into the end of the run; nothing is left to tell
        pass


def _has_live(handles: collections.deque) -> bool:
    return any(not handle._cancelled for handle in handles)


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
