"""Handles of async operations: ``Work``, its future, and the buffer checks.

torch's contract for ``async_op=True``, ``isend`` and ``irecv`` is that the
program leaves the buffers alone until ``Work.wait()`` returns (or
``is_completed()`` says so). Here the transfer happens at scheduler-chosen
steps, and every step compares the buffers with what they should hold, so a
program that touches them early is caught whatever the timing. The bug is an
``exception`` whose message reads::

    async <op> buffer modified before Work.wait() on rank <r>: <what changed> (issued at <file>:<line>)

where ``<what changed>`` is one of ``the input changed before the transfer
read it``, ``the input changed before the transfer wrote the output``,
``the receive buffer changed before the message arrived`` or ``the output
changed after the transfer wrote it``.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from types import FrameType
from typing import TYPE_CHECKING, Protocol, Sequence

import torch
import torch.distributed

from dnsse.engine.agent import Wait
from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.execution import ExecutionAborted
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.torch_dist.futures import PendingFuture
from dnsse.frameworks.torch_dist.guard import Unsettled, spans_of
from dnsse.frameworks.torch_dist.mode_off import apart
from dnsse.frameworks.torch_dist.streams import Entry, waits_on_stream
from dnsse.frameworks.torch_dist.world import current_rank

if TYPE_CHECKING:
    from dnsse.frameworks.torch_dist.collectives import Instance
    from dnsse.frameworks.torch_dist.world import RankState

INPUT_BEFORE_READ = "the input changed before the transfer read it"
INPUT_BEFORE_WRITE = "the input changed before the transfer wrote the output"
RECEIVE_BEFORE_ARRIVAL = "the receive buffer changed before the message arrived"
OUTPUT_AFTER_WRITE = "the output changed after the transfer wrote it"


def same(live: Sequence[torch.Tensor], expected: Sequence[torch.Tensor]) -> bool:
    """Bit-for-bit equal tensors, NaNs included."""
    for a, b in zip(live, expected):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if torch.equal(a, b):
            continue
        if not a.is_floating_point() or not torch.equal(a.isnan(), b.isnan()):
            return False
        if not torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0)):
            return False
    return True


def buffer_bug(op: str, rank: int, what: str, site: str, agent: str) -> Bug:
    return Bug(
        BugKind.EXCEPTION,
        f"async {op} buffer modified before Work.wait() on rank {rank}: {what} (issued at {site})",
        details=[
            f"rank {rank} issued {op} at {site} and touched its buffer before the operation completed; "
            "leave the buffers of an async operation alone until Work.wait() returns"
        ],
        agent=agent,
    )


class AsyncPart(Protocol):
    """One rank's side of an async operation, as its Work sees it."""

    op: str
    site: str
    done: bool
    instance: Instance | None
    touches: tuple[tuple[str, Access], ...]
    entry: Entry | None
    # The virtual device's clock after the operation's kernel, when the rank tracks its streams.
    kernel: dict[str, int] | None

    def describe_wait(self) -> str: ...

    def buffers(self) -> list[torch.Tensor]:
        """Every tensor the transfer reads or writes."""
        ...

    def guarded(self) -> list[torch.Tensor]:
        """The buffers the program must not read before wait()."""
        ...

    def verify(self) -> Bug | None: ...

    def result(self) -> list: ...

    def source_rank(self) -> int: ...


class Work(torch.distributed.Work):
    """What the controlled process group returns for every operation.

    A real ``torch.distributed.Work``, so torch's Python API, DDP's C++
    reducer and functional collectives can hold and wait on it: torch calls
    ``wait()`` and ``get_future()`` of a Python subclass from C++ too. A
    synchronous operation's Work is complete when it is returned; an async
    one completes when its transfer steps ran, and ``wait()`` blocks the rank
    at a scheduling point until then.
    """

    def __init__(self, state: RankState, part: AsyncPart, synchronous: bool = False) -> None:
        super().__init__()
        self._state = state
        self._part = part
        self._synchronous = synchronous
        self._settled = synchronous
        self._unsettled: Unsettled | None = None
        if not synchronous:
            spans = spans_of(part.guarded())
            if spans:
                self._unsettled = Unsettled(part.op, part.site, spans, on_stream=part.entry is not None)
                state.unsettled.append(self._unsettled)

    def is_completed(self) -> bool:
        if self._part.done:
            apart(self._settle)
            return True
        return False

    def wait(self, timeout: object = None) -> bool:
        """Wait for the transfer; with a ``timeout`` it may give up, as torch raises then.

        Under NCCL semantics, and without a timeout, the program's own
        ``wait()`` only makes the rank's compute stream wait (see
        :func:`~.streams.waits_on_stream`): the host goes on.
        """
        if self._synchronous:
            return True
        return apart(self._wait, current_rank("Work.wait"), sys._getframe(1), _timeout_seconds(timeout))

    def synchronize(self) -> None:
        """NCCL: the same as ``wait()``. gloo: nothing, as gloo's CPU work does not wait here (measured)."""
        if self._synchronous:
            return
        state = current_rank("Work.synchronize")
        if self._part.entry is not None:
            apart(self._wait, state, sys._getframe(1), None)

    def _wait(self, state: RankState, caller: FrameType, seconds: float | None) -> bool:
        part = self._part
        execution = state.world.execution
        if not part.done and seconds is None and waits_on_stream(state, part, caller):
            # Later kernels that touch the buffers run after the operation; the host goes on.
            state.streams.fence.append(part)  # type: ignore[arg-type]
            if state.device is not None:
                state.device.stream_waits(part.kernel)
            self._forget()
            if caller.f_code.co_filename in execution.source_files:
                execution.emit(state.agent, "wait", {"op": part.op, "rank": state.rank})
            return True
        state.waiting_in = part.instance
        try:
            finished = execution.block(
                state.agent,
                Wait(lambda: part.done, part.describe_wait, seconds),
                Operation("wait", part.touches, f"Work.wait() of {part.op}"),
            )
        finally:
            state.waiting_in = None
        if not finished:
            raise torch.distributed.DistBackendError(
                f"Work.wait() of {part.op} on rank {state.rank} timed out after {seconds:g}s"
            )
        # What the transfer touched is known once it happened (the message a receive took).
        execution.touch(part.touches)
        device = state.device
        if device is not None:
            # Finished already or not, a wait that orders only the stream tells the host nothing.
            if seconds is None and waits_on_stream(state, part, caller):
                device.stream_waits(part.kernel)
            else:
                device.host_waits(part.kernel)
        execution.emit(state.agent, "wait", {"op": part.op, "rank": state.rank})
        self._settle()
        return True

    def _settle(self) -> None:
        """Check the buffers once, when the program may first use them again."""
        if self._settled:
            return
        self._forget()
        bug = self._part.verify()
        if bug is not None:
            self._state.world.execution.fail(bug)
            raise ExecutionAborted()

    def _forget(self) -> None:
        """The buffers are the program's again: reading them is no longer a bug."""
        self._settled = True
        unsettled = self._state.unsettled
        if self._unsettled is not None and self._unsettled in unsettled:  # torch.cuda.synchronize() may have
            unsettled.remove(self._unsettled)

    def is_success(self) -> bool:
        return True

    def exception(self) -> None:
        return None

    def result(self) -> list:
        return self._part.result()

    def source_rank(self) -> int:
        return self._part.source_rank()

    _source_rank = source_rank

    def get_future(self) -> torch.futures.Future:
        """A future of the outputs.

        C++ callers wait on the future itself, outside any scheduling point,
        so it must be complete when they do. Asked for during a backward pass
        (DDP's reducer launching a bucket's all-reduce from its autograd
        hook), it is returned pending, so the rest of backward overlaps the
        transfer as it does on a real backend; a final callback of the
        backward pass, queued before the reducer's own (which DDP queues
        once the last bucket was launched), waits for every such operation
        at a scheduling point and completes its future. Python code that
        waits on such a future before then (a communication hook waiting on
        its own all-reduce, as PowerSGD's hook does) waits for the operation
        at a scheduling point (see :mod:`.futures`). Anywhere else,
        asking for the future waits for the operation first.
        """
        if not self._part.done and torch._C._current_autograd_node() is not None:
            return self._complete_after_backward()
        self.wait()
        future: torch.futures.Future = torch.futures.Future()
        future.set_result(self.result())
        return future

    def _complete_after_backward(self) -> torch.futures.Future:
        future = PendingFuture(self)
        state = current_rank("Work.get_future")
        if not state.backward_works:
            torch.autograd.Variable._execution_engine.queue_callback(lambda: _complete_backward_works(state))
        state.backward_works.append(future)
        return future

    def __repr__(self) -> str:
        return f"<dnsse Work {self._part.op} on rank {self._state.rank}{' done' if self._part.done else ''}>"


def synchronous_work(state: RankState, part: AsyncPart) -> Work:
    """The Work of a synchronous collective: complete when returned, for ``part``.

    torch's Python API, the only caller that gets one (see
    ``backend._caller_waits``), waits on it at once and drops it, so one
    Work per rank serves them all: making a Work (a C++ object behind
    pybind11) cost more than the rest of the handle.
    """
    work = state.synchronous_work
    if work is None:
        work = state.synchronous_work = Work(state, part, synchronous=True)
    else:
        work._part = part  # type: ignore[attr-defined]
    return work  # type: ignore[return-value]


def _complete_backward_works(state: RankState) -> None:
    """The end of a backward pass: wait for the operations it launched and complete their futures."""
    works, state.backward_works = state.backward_works, []
    for future in works:
        future.complete()


def _timeout_seconds(timeout: object) -> float | None:
    """torch's ``timeout`` (a ``timedelta``; zero means none) in seconds, ``None`` for no timeout."""
    if timeout is None:
        return None
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)  # type: ignore[arg-type]
    return seconds if seconds > 0 else None
