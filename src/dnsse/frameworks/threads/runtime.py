"""What the threads framework remembers about one execution.

Names of primitives and threads, synthetic thread idents and the virtual clock
are counted per execution, so that a replayed execution names everything the
same way and reads the same times.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Callable, Hashable

from dnsse.engine.agent import ThreadAgent

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution
    from dnsse.frameworks.threads.process_exit import ProcessExit
    from dnsse.frameworks.threads.shared_state import SharedStatePlan
    from dnsse.frameworks.threads.thread import Thread

# Virtual time starts at fixed values: a program that prints or branches on the
# clock then behaves the same in every execution of a schedule.
MONOTONIC_BASE = 1_000.0
WALL_CLOCK_BASE = 1_750_000_000.0
FIRST_IDENT = 0x1000
# A read of a clock costs real time; an agent's reads while nothing but steps moves
# time (a loop on the clock: ``while time.perf_counter() < end: pass``, also
# with a flag or ``sleep(0)`` in it) see it pass by this much each, from the
# third on, so such a loop ends as it does without dnsse. Past
# 10,000 such reads (a hundredth of a virtual second) the cost doubles every
# 1,000 reads, up to a hundredth of a second, so a spin of seconds ends after
# some 20,000 reads instead of millions (a traced read costs about 15 µs).
READ_COST = 1e-6
FREE_READS = 2
_CHEAP_READS = 10_000
_READS_PER_DOUBLING = 1_000
_DEAREST_READ = 0.01


class ThreadsRuntime:
    """Per-execution state shared by the controlled primitives."""

    def __init__(self, execution: Execution) -> None:
        self.execution = execution
        self.plan: SharedStatePlan | None = None
        self.clock = execution.clock
        self._numbers: dict[str, int] = {}
        self._next_ident = FIRST_IDENT
        self._handles: dict[int, Thread] = {}
        # Agents whose process ends with the job (a Ray worker): set by a framework.
        self.is_job_worker: Callable[[ThreadAgent], bool] = lambda agent: False
        self._job_threads: set[int] = set()
        # What interrupts an agent wherever it waits or sleeps, as a signal interrupts a process's
        # main thread (``ray.cancel`` raises KeyboardInterrupt in a running task): set by a framework.
        # ``interrupt_of(agent, take)``: what interrupts it, if anything; ``take`` consumes it.
        self.interrupt_of: Callable[[ThreadAgent, bool], BaseException | None] | None = None
        # Which process the calling agent belongs to (a torch rank is one; set by a framework),
        # and each process's exit (see dnsse.frameworks.threads.process_exit).
        self.process_of: Callable[[], Hashable] = lambda: None
        self.process_exits: dict[Hashable, ProcessExit] = {}
        # Per agent id: the clock's count of moves at its latest read, and its reads since time last moved
        # otherwise than by steps and reads (see VirtualClock.moves).
        self._reads: dict[int, tuple[int, int]] = {}

    def number(self, kind: str) -> int:
        """The next number of a primitive kind: Lock#1, Lock#2, Thread-1, ..."""
        value = self._numbers.get(kind, 0) + 1
        self._numbers[kind] = value
        return value

    def new_ident(self) -> int:
        ident = self._next_ident
        self._next_ident += 1
        return ident

    @property
    def elapsed(self) -> float:
        """Virtual seconds since the execution started (its clock: dnsse.engine.clock)."""
        return self.clock.now

    def advance_to(self, elapsed: float) -> None:
        """Move virtual time forward; it never goes back."""
        self.clock.advance_to(elapsed)

    def take_interrupt(self, agent: ThreadAgent) -> None:
        """Raise what interrupts ``agent``, if anything does (see ``interrupt_of``)."""
        interrupt_of = self.interrupt_of
        if interrupt_of is not None:
            interrupt = interrupt_of(agent, True)
            if interrupt is not None:
                raise interrupt

    def read_clock(self, agent: ThreadAgent) -> float:
        """Virtual time as ``agent``'s read of a clock sees it (see ``READ_COST``)."""
        clock = self.clock
        clock.reads += 1
        seen, reads = self._reads.get(agent.id, (None, 0))
        reads = reads + 1 if seen == clock.moves else 1
        if reads > FREE_READS:
            clock.now += spin_cost(reads - FREE_READS)
        self._reads[agent.id] = (clock.moves, reads)
        return clock.now

    def ends_with_job(self, agent: ThreadAgent) -> bool:
        """Whether ``agent`` runs in a worker process, which the end of the job kills with its threads."""
        return agent.id in self._job_threads or self.is_job_worker(agent)

    def started_by_job_worker(self, thread_agent: ThreadAgent) -> None:
        self._job_threads.add(thread_agent.id)

    def attach(self, agent: ThreadAgent, handle: Thread) -> None:
        self._handles[agent.id] = handle

    def handle_of(self, agent: ThreadAgent) -> Thread:
        """The ``Thread`` object of an agent; agents started by others get one on first use."""
        handle = self._handles.get(agent.id)
        if handle is None:
            # thread.py is built on this runtime (a Thread asks it for names and the clock).
            from dnsse.frameworks.threads.thread import adopt

            handle = adopt(agent, self)
            self._handles[agent.id] = handle
        return handle

    def live_handles(self) -> list[Thread]:
        # Tasks of an event loop share their loop's thread: each thread is listed once.
        handles = [self._handles[a.id] for a in self.execution.thread_agents() if a.id in self._handles and not a.done]
        return list(dict.fromkeys(handles))

    def creation_site(self) -> str | None:
        """``file.py:LINE`` of the innermost frame of the program under test."""
        frame = sys._getframe(1)
        files = self.execution.source_files
        while frame is not None:
            if frame.f_code.co_filename in files:
                return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"
            frame = frame.f_back
        return None


def spin_cost(reads: int) -> float:
    """The time the ``reads``-th read (or round) of a loop that waits for time to pass takes."""
    if reads <= _CHEAP_READS:
        return READ_COST
    return min(READ_COST * 2 ** ((reads - _CHEAP_READS) // _READS_PER_DOUBLING), _DEAREST_READ)


def runtime_for(execution: Execution) -> ThreadsRuntime:
    runtime = execution.framework_state.get("threads")
    if runtime is None:
        runtime = execution.framework_state["threads"] = ThreadsRuntime(execution)
    return runtime  # type: ignore[return-value]


def ends_waits(interrupt: BaseException | None) -> bool:
    """Whether ``interrupt`` ends a wait or sleep at once.

    Ray's ``ray.cancel`` raises KeyboardInterrupt in a task with
    ``_thread.interrupt_main()``: Python's SIGINT handler runs at the next
    bytecode, but no signal is sent, so a thread blocked in a lock's
    acquire, an ``Event.wait()`` or a ``time.sleep`` stays blocked until
    that ends by itself (a task waiting forever is never cancelled). A
    killed worker (``force=True``) ends everything.
    """
    return interrupt is not None and not isinstance(interrupt, KeyboardInterrupt)
