"""Controlled ``threading.Thread`` and the functions that ask "which thread am I".

A started :class:`Thread` is a :class:`~dnsse.engine.agent.ThreadAgent`: its
``run()`` executes only when the scheduler picks it, and ``join`` is a wait
that a deadlock report names (``Thread-2 (worker) to finish``). Names and
idents are counted per execution, so a replay names threads the same way.
A thread started outside an execution is a real thread, as before.

An uncaught exception in a thread is a bug of the run (Python would print it
and carry on, which is how such bugs go unnoticed); ``SystemExit`` ends the
thread quietly, as in Python. A program that sets ``threading.excepthook``
has said what an uncaught exception of its threads means: its hook gets the
exception, as in Python, and only an exception of the hook itself is a bug.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, Callable

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.execution import current_agent
from dnsse.engine.operation import Access, Operation
from dnsse.engine.untraced import untraced
from dnsse.frameworks.threads import clock
from dnsse.frameworks.threads.event import Event
from dnsse.frameworks.threads.inheritance import captured
from dnsse.frameworks.threads.primitive import block_until
from dnsse.frameworks.threads.runtime import ThreadsRuntime, runtime_for
from dnsse.frameworks.threads.shared_state import call_from_outside, traced

RealThread = threading.Thread
real_current_thread = threading.current_thread
real_main_thread = threading.main_thread
real_enumerate = threading.enumerate
real_get_ident = threading.get_ident
real_get_native_id = threading.get_native_id

_uncontrolled_numbers = itertools.count(1)
# threading.excepthook as it was when control was installed (Python's, or a test runner's):
# a hook other than this one is the program's (see _bootstrap).
hook_outside: list[Callable[[Any], object]] = [threading.excepthook]
_POLL_SECONDS = 0.001


class Thread:
    """Stands for ``threading.Thread``: same constructor, subclassing with ``run()``, same API."""

    # A thread the program started, never a process's main thread: signal.signal refuses to run in it.
    program_thread = True

    @untraced
    def __init__(
        self,
        group: None = None,
        target: Callable[..., object] | None = None,
        name: str | None = None,
        args: tuple = (),
        kwargs: dict[str, Any] | None = None,
        *,
        daemon: bool | None = None,
    ) -> None:
        if group is not None:
            raise AssertionError("group argument must be None for now")
        agent = current_agent()
        if name is None:
            number = runtime_for(agent.execution).number("Thread") if agent else next(_uncontrolled_numbers)
            name = f"Thread-{number}"
            target_name = getattr(target, "__name__", None)
            if target_name is not None:
                name += f" ({target_name})"
        self._target = target
        self._args = args
        self._kwargs = {} if kwargs is None else kwargs
        self._name = str(name)
        self._daemonic = current_thread().daemon if daemon is None else daemon
        self._started = False
        self._ident: int | None = None
        self._agent: ThreadAgent | None = None
        self._real: threading.Thread | None = None
        # A pool keeps its threads in a set and joins them in its order: the same in every execution
        # (see stable_hashes), where the default hash, the thread's address, is not.
        self._hash = runtime_for(agent.execution).number("Thread hash") if agent else None

    def __hash__(self) -> int:
        stable = self.__dict__.get("_hash")
        return stable if stable is not None else object.__hash__(self)

    @untraced
    def start(self) -> None:
        if self._started:
            raise RuntimeError("threads can only be started once")
        self._started = True
        agent = current_agent()
        if agent is None:
            self._real = RealThread(target=self.run, name=self._name, daemon=self._daemonic)
            self._real.start()
            self._ident = self._real.ident
            return
        execution = agent.execution
        runtime = runtime_for(execution)
        self._ident = runtime.new_ident()
        execution.yield_point(agent, Operation("thread.start", ((self._object, Access.SYNC),), self._name))
        # A thread of a Ray worker dies with the worker's process when the job ends, daemon or not.
        in_worker = runtime.ends_with_job(agent)
        # Started in its creator's process: it acts for whom the creator acts for (a torch rank).
        child = ThreadAgent(
            execution, self._name, self._bootstrap, daemon=self._daemonic or in_worker, on_start=captured()
        )
        if in_worker:
            runtime.started_by_job_worker(child)
        child.handle = self
        self._agent = child
        runtime.attach(child, self)
        execution.emit(agent, "thread.start", {"thread": self._name})

    def _bootstrap(self) -> None:
        agent = self._agent
        assert agent is not None
        with traced(agent, runtime_for(agent.execution).plan):
            try:
                self.run()
            except SystemExit:
                pass
            except (Exception, KeyboardInterrupt) as error:  # what Python hands the hook; not dnsse's unwinding
                hook = threading.excepthook
                if hook is hook_outside[0]:
                    raise
                hook(threading.ExceptHookArgs((type(error), error, error.__traceback__, self)))

    def run(self) -> None:
        try:
            if self._target is not None:
                self._announce_target()
                self._target(*self._args, **self._kwargs)
        finally:
            del self._target, self._args, self._kwargs

    @untraced
    def _announce_target(self) -> None:
        """The call of the target, a scheduling point when it touches data (see ``call_from_outside``)."""
        agent = current_agent()
        if agent is not None:
            plan = runtime_for(agent.execution).plan
            call_from_outside(agent, plan, self._target, [*self._args, *self._kwargs.values()])

    @untraced
    def join(self, timeout: float | None = None) -> None:
        if not self._started:
            raise RuntimeError("cannot join thread before it is started")
        if self is current_thread():
            raise RuntimeError("cannot join current thread")
        if self._real is not None:
            self._real.join(timeout)
            return
        child = self._agent
        assert child is not None
        agent = current_agent()
        if agent is None:
            self._join_from_outside(child, timeout)
            return
        # agent#N: every step of agent N writes it (dnsse.search.dependency), so
        # asking whether the thread finished depends on how far it got.
        operation = Operation(
            "thread.join", ((self._object, Access.SYNC), (f"agent#{child.id}", Access.READ)), self._name
        )
        if timeout is not None and timeout <= 0:
            agent.execution.yield_point(agent, operation)
            return
        block_until(agent, operation, lambda: child.done, lambda: f"{self._name} to finish", timeout)

    def _join_from_outside(self, child: ThreadAgent, timeout: float | None) -> None:
        """A thread outside control cannot be scheduled; it polls until the agent is done.

        An agent of an execution that was cut short never finishes: it was
        unwound. Joining it then returns, or interpreter exit would hang in
        ``concurrent.futures``' exit hook, which joins every pool thread.
        """
        deadline = None if timeout is None else clock.real_monotonic() + timeout
        execution = child.execution
        while not (child.done or execution.aborted) and (deadline is None or clock.real_monotonic() < deadline):
            clock.real_sleep(_POLL_SECONDS)

    @untraced
    def is_alive(self) -> bool:
        if self._real is not None:
            return self._real.is_alive()
        if self._agent is None:
            return False
        agent = current_agent()
        if agent is not None:
            observed = ((self._object, Access.READ), (f"agent#{self._agent.id}", Access.READ))
            agent.execution.yield_point(agent, Operation("thread.is_alive", observed))
        return not self._agent.done

    @property
    def _object(self) -> str:
        return f"thread#{self._ident}"

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = str(value)

    @property
    def ident(self) -> int | None:
        return self._ident

    @property
    def native_id(self) -> int | None:
        return self._ident

    @property
    def daemon(self) -> bool:
        return self._daemonic

    @daemon.setter
    def daemon(self, daemonic: bool) -> None:
        if self._started:
            raise RuntimeError("cannot set daemon status of active thread")
        self._daemonic = daemonic

    def __repr__(self) -> str:
        if not self._started:
            status = "initial"
        elif self._real is not None:
            status = "started" if self._real.is_alive() else "stopped"
        else:
            status = "stopped" if self._agent is None or self._agent.done else "started"
        if self._daemonic:
            status += " daemon"
        if self._ident is not None:
            status += f" {self._ident}"
        return f"<{type(self).__name__}({self._name}, {status})>"


class _AgentThread(Thread):
    """The ``Thread`` object of an agent that no ``Thread.start`` created (the main agent)."""

    def __init__(self, agent: ThreadAgent, runtime: ThreadsRuntime, name: str) -> None:
        self._target = None
        self._args = ()
        self._kwargs = {}
        self._name = name
        self._daemonic = agent.daemon
        self._started = True
        self._ident = runtime.new_ident()
        self._agent = agent
        self._real = None


def adopt(agent: ThreadAgent, runtime: ThreadsRuntime, name: str | None = None) -> Thread:
    return _AgentThread(agent, runtime, agent.name if name is None else name)


class Timer(Thread):
    """Calls ``function`` after ``interval`` virtual seconds unless cancelled first."""

    def __init__(
        self,
        interval: float,
        function: Callable[..., object],
        args: tuple | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.interval = interval
        self.function = function
        self.args = args if args is not None else ()
        self.kwargs = kwargs if kwargs is not None else {}
        self.finished = Event()

    def cancel(self) -> None:
        self.finished.set()

    def run(self) -> None:
        self.finished.wait(self.interval)
        if not self.finished.is_set():
            self.function(*self.args, **self.kwargs)
        self.finished.set()


@untraced
def current_thread() -> Thread | threading.Thread:
    agent = current_agent()
    if agent is None:
        return real_current_thread()
    return runtime_for(agent.execution).handle_of(agent)


@untraced
def main_thread() -> Thread | threading.Thread:
    agent = current_agent()
    if agent is None:
        return real_main_thread()
    execution = agent.execution
    return runtime_for(execution).handle_of(execution.thread_agents()[0])


@untraced
def enumerate() -> list[Thread] | list[threading.Thread]:  # noqa: A001 - the name threading uses
    agent = current_agent()
    if agent is None:
        return real_enumerate()
    runtime = runtime_for(agent.execution)
    runtime.handle_of(agent)
    return runtime.live_handles()


def active_count() -> int:
    return len(enumerate())


@untraced
def get_ident() -> int:
    agent = current_agent()
    if agent is None:
        return real_get_ident()
    ident = runtime_for(agent.execution).handle_of(agent).ident
    assert ident is not None
    return ident


@untraced
def get_native_id() -> int:
    agent = current_agent()
    if agent is None:
        return real_get_native_id()
    return get_ident()
