"""Collectives under control: matching ranks' calls, blocking, async progress.

Each (group, per-rank sequence number) is one collective :class:`Instance`.
The first rank to issue at a position fixes its signature; a later rank that
issues something else (another op, dtype, shape, root or reduction) is a
``collective_mismatch`` naming both ranks, both signatures and both call
sites.

A synchronous part blocks its rank until every member's input is read; the
rank that completes the set computes the results and writes every
synchronous member's outputs (their inputs cannot move: those ranks are
blocked). An asynchronous part is a :class:`~dnsse.engine.agent.StepAgent`
with two steps, *read* (enabled when every member issued) and *write*
(enabled when every member's input was read), so the scheduler decides when
the data moves relative to the rest of the program; see :mod:`.work` for the
buffer checks those steps make. Under NCCL semantics every part is
asynchronous and enqueued on its group's stream (:mod:`.streams`): its read
waits until every member's part is at the head of its stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from datetime import timedelta
from typing import TYPE_CHECKING, Callable

import torch

from torch.distributed.constants import default_pg_nccl_timeout, default_pg_timeout

from dnsse.engine.agent import FINISHED, Agent, Signal, StepAgent, Wait
from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.execution import ExecutionAborted
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.torch_dist.mode_off import apart
from dnsse.frameworks.torch_dist.ops import MonitoredBarrier
from dnsse.frameworks.torch_dist.streams import Entry, collective_stream, running, stream_objects, uses_nccl
from dnsse.frameworks.torch_dist.work import (
    INPUT_BEFORE_READ,
    INPUT_BEFORE_WRITE,
    OUTPUT_AFTER_WRITE,
    Work,
    buffer_bug,
    same,
    synchronous_work,
)
from dnsse.frameworks.torch_dist.world import RankState, call_site

if TYPE_CHECKING:
    from dnsse.frameworks.torch_dist.groups import Group
    from dnsse.frameworks.torch_dist.ops import CollectiveCall

# What torch passes for a monitored_barrier() the program gave no timeout (see Collectives.monitored_barrier).
_DEFAULT_TIMEOUTS = tuple(t for t in (default_pg_timeout, default_pg_nccl_timeout) if isinstance(t, timedelta))


@dataclass(eq=False, slots=True)
class Part:
    """One member's side of one collective instance."""

    state: RankState
    index: int
    call: CollectiveCall
    signature: str
    site: str
    instance: Instance
    asynchronous: bool
    snapshot: list | None = None
    read: bool = False
    written: list | None = None
    done: bool = False
    agent: StepAgent | None = None
    entry: Entry | None = None
    # The virtual device's clock after this part's kernel (see .virtual_device), for Work.wait() to join.
    kernel: dict[str, int] | None = None
    # Fired with done: a rank blocked on its part sleeps until then.
    finished: Signal = field(default_factory=Signal)

    @property
    def op(self) -> str:
        return self.call.name

    @property
    def touches(self) -> tuple[tuple[str, Access], ...]:
        return ((self.instance.object_name, Access.SYNC),)

    def describe_wait(self) -> str:
        return f"Work.wait() of {self.instance.describe()}"

    def step(self) -> Wait | object:
        """The async transfer: first read the input, then write the output."""
        instance = self.instance
        execution = self.state.world.execution
        if not same(self.call.inputs(), self.snapshot):  # type: ignore[arg-type]
            what = INPUT_BEFORE_WRITE if self.read else INPUT_BEFORE_READ
            execution.fail(buffer_bug(self.op, self.state.rank, what, self.site, self.state.agent.name))
            return FINISHED
        if not self.read:
            self.read = True
            if self.entry is not None:
                # Its kernel started because every member's stream reached it.
                execution.touch(tuple(o for part in instance.parts for o in stream_objects(part)))  # type: ignore[union-attr]
            instance.input_read()
            self.agent.pending = Operation(  # type: ignore[union-attr]
                f"{self.op}.write",
                ((instance.object_name, Access.SYNC), (f"agent#{self.state.agent.id}", Access.READ))
                + stream_objects(self),
                f"{self.op} writes rank {self.state.rank}",
            )
            return None if instance.results is not None else Wait(instance.computed, instance.describe)
        self.call.write(instance.results[self.index])  # type: ignore[index]
        self.written = [t.detach().clone() for t in self.call.outputs()]
        self.finish()
        return FINISHED

    def finish(self) -> None:
        self.done = True
        self.finished.fire()
        instance = self.instance
        self.state.world.execution.emit(
            self.state.agent,
            "collective.done",
            {"op": self.op, "rank": self.state.rank, "group": instance.group.name, "seq": instance.seq},
        )
        instance.part_finished()

    def guarded(self) -> list:
        return [t for t in self.call.outputs() if isinstance(t, torch.Tensor)]

    def buffers(self) -> list:
        return [t for t in (*self.call.inputs(), *self.call.outputs()) if isinstance(t, torch.Tensor)]

    def verify(self) -> Bug | None:
        if self.written is None or same(self.call.outputs(), self.written):
            return None
        return buffer_bug(self.op, self.state.rank, OUTPUT_AFTER_WRITE, self.site, self.state.agent.name)

    def result(self) -> list:
        return list(self.call.outputs())

    def source_rank(self) -> int:
        raise RuntimeError("source_rank() is only defined for the Work of an irecv")


class Instance:
    """One collective: what every member of ``group`` issues as its ``seq``-th."""

    __slots__ = ("table", "group", "seq", "parts", "first", "issued", "reads", "finished", "results", "object_name")

    def __init__(self, table: Collectives, group: Group, seq: int, object_name: str) -> None:
        self.table = table
        self.group = group
        self.seq = seq
        self.parts: list[Part | None] = [None] * group.size()
        self.first: Part | None = None
        self.issued = 0
        self.reads = 0
        self.finished = 0
        self.results: list[list] | None = None
        self.object_name = object_name

    @property
    def op(self) -> str:
        return self.first.op if self.first is not None else "collective"

    def all_issued(self) -> bool:
        return self.issued == len(self.parts)

    def computed(self) -> bool:
        return self.results is not None

    def all_running(self) -> bool:
        """Every member issued, and every member's stream reached this collective (NCCL)."""
        return self.all_issued() and all(running(part) for part in self.parts)  # type: ignore[arg-type]

    def describe(self) -> str:
        head = f"{self.op} #{self.seq} of {self.group}"
        missing = [str(self.group.ranks[i]) for i, part in enumerate(self.parts) if part is None]
        if missing:
            return f"{head} (waiting for ranks {', '.join(missing)})"
        queued = [str(part.state.rank) for part in self.parts if part is not None and not running(part)]
        if queued:
            return f"{head} (queued behind earlier work on the NCCL streams of ranks {', '.join(queued)})"
        unread = [str(part.state.rank) for part in self.parts if part is not None and not part.read]
        if unread:
            return f"{head} (waiting for the async transfers of ranks {', '.join(unread)})"
        return head

    def join(self, part: Part) -> Bug | None:
        first = self.first
        if first is None:
            self.first = part
        elif part.signature != first.signature:
            return Bug(
                BugKind.COLLECTIVE_MISMATCH,
                f"ranks {first.state.rank} and {part.state.rank} issued different collectives as #{self.seq} "
                f"of {self.group}: {first.signature} on rank {first.state.rank}, "
                f"{part.signature} on rank {part.state.rank}",
                details=[
                    f"rank {first.state.rank}: {first.signature} at {first.site}",
                    f"rank {part.state.rank}: {part.signature} at {part.site}",
                ],
                agent=part.state.agent.name,
            )
        self.parts[part.index] = part
        self.issued += 1
        if self.issued == len(self.parts):
            parts: list[Part] = self.parts  # type: ignore[assignment]
            disagreement = type(part.call).disagreement([member.call for member in parts], self.group.ranks)
            if disagreement is not None:
                return Bug(
                    BugKind.COLLECTIVE_MISMATCH,
                    f"the members of #{self.seq} {part.call.name} of {self.group} disagree on {disagreement}",
                    details=[f"rank {member.state.rank}: {member.signature} at {member.site}" for member in parts],
                    agent=part.state.agent.name,
                )
        return None

    def input_read(self) -> None:
        self.reads += 1
        if self.reads == len(self.parts):
            self._compute()

    def _compute(self) -> None:
        parts: list[Part] = self.parts  # type: ignore[assignment]
        inputs = [part.snapshot if part.asynchronous else part.call.read_blocked() for part in parts]
        self.results = type(parts[0].call).compute([part.call for part in parts], inputs)
        for part in parts:
            if not part.asynchronous:
                part.call.write(self.results[part.index])
                part.finish()

    def part_finished(self) -> None:
        self.finished += 1
        if self.finished == len(self.parts):
            del self.table.instances[(self.group.name, self.seq)]


@dataclass(eq=False)
class Collectives:
    """Every collective of one execution."""

    instances: dict[tuple[str, int], Instance] = field(default_factory=dict)
    counts: dict[tuple[str, int], int] = field(default_factory=dict)
    last: dict[tuple[str, int], Part] = field(default_factory=dict)

    def issue(
        self,
        state: RankState,
        group: Group,
        call: CollectiveCall,
        async_op: bool,
        timeout: tuple[float, Callable[[Instance], str]] | None = None,
    ) -> Work:
        """Issue ``call`` for the calling rank, a member of ``group``; block when synchronous.

        With a ``timeout`` of (seconds, message) a synchronous wait may expire
        (a scheduling choice, see :class:`~dnsse.engine.agent.Wait`): it then
        raises ``RuntimeError(message(instance))``.
        """
        index = group.index_of(state.rank)
        assert index is not None, "torch hands a group's operations only to its members"
        # NCCL returns once the collective is enqueued (monitored_barrier is gloo's alone).
        nccl = not isinstance(call, MonitoredBarrier) and uses_nccl(state, group)
        async_op = async_op or nccl
        execution = state.world.execution
        agent = state.agent
        key = (group.name, state.rank)
        seq = self.counts.get(key, 0) + 1
        object_name = f"coll:{group.name}#{seq}"
        execution.yield_point(
            agent, Operation(call.name, ((object_name, Access.SYNC),), f"{call.name} #{seq} of {group}")
        )
        self.counts[key] = seq
        instance = self.instances.get((group.name, seq))
        if instance is None:
            instance = self.instances[(group.name, seq)] = Instance(self, group, seq, object_name)
        part = Part(state, index, call, call.signature(), call_site(execution.source_files), instance, async_op)
        self.last[key] = part
        mismatch = instance.join(part)
        if mismatch is not None:
            execution.fail(mismatch)
            raise ExecutionAborted()
        execution.emit(
            agent, "collective.issue", {"op": call.name, "rank": state.rank, "group": group.name, "seq": seq}
        )
        if state.device is not None:
            tensors = [t for t in call.inputs() if isinstance(t, torch.Tensor)]
            outputs = [t for t in call.outputs() if isinstance(t, torch.Tensor)]
            part.kernel = state.device.collective(
                call.name, part.site, collective_stream(group) if nccl else None, tensors, outputs
            )
        if async_op:
            part.snapshot = call.read()
            if nccl:
                state.streams.enqueue(state.rank, *collective_stream(group), part)
            part.agent = StepAgent(
                execution,
                f"rank {state.rank} {call.name} #{seq}",
                partial(apart, part.step),  # run from any scheduling point of whichever rank is running
                Wait(instance.all_running if part.entry is not None else instance.all_issued, instance.describe),
                # The transfer reads and writes the rank's tensors: agent#N is
                # written by every step of the rank's agent (dnsse.search.dependency).
                Operation(
                    f"{call.name}.read",
                    ((object_name, Access.SYNC), (f"agent#{agent.id}", Access.READ)) + stream_objects(part),
                    f"{call.name} reads rank {state.rank}",
                ),
            )
            # The transfer runs concurrently with the code after the issue: let
            # it take steps before that code touches the buffer.
            execution.yield_point(
                agent, Operation(f"{call.name}.issued", ((object_name, Access.READ),), f"after {call.name} #{seq}")
            )
            return Work(state, part)
        # A synchronous member's input cannot change while its rank is blocked,
        # so it counts as read now and is cloned only when results are computed.
        instance.input_read()
        if not part.done:
            state.waiting_in = instance
            try:
                arrived = execution.block(
                    agent,
                    Wait(lambda: part.done, instance.describe, None if timeout is None else timeout[0], part.finished),
                    Operation(f"{call.name}.done"),
                )
            finally:
                state.waiting_in = None
            if not arrived:
                raise RuntimeError(timeout[1](instance))  # type: ignore[index]
        return synchronous_work(state, part)

    def monitored_barrier(self, state: RankState, group: Group, timeout: timedelta | None, wait_all: bool) -> None:
        """gloo's monitored barrier: when it times out, the group's first rank names who is missing.

        torch passes the default process-group timeout (30 minutes) when the
        program names none. Such a barrier is a plain barrier here: that a
        rank merely takes half an hour to come is no schedule of the
        program's, and exploring it would call every correct program that
        uses ``monitored_barrier()`` buggy. A rank that never comes is still
        found (the others wait for good: a collective mismatch or deadlock).
        A timeout the program chose may expire whenever a rank is missing.
        """
        if timeout is None or timeout in _DEFAULT_TIMEOUTS:
            self.issue(state, group, MonitoredBarrier(), False)
            return
        seconds = timeout.total_seconds()

        def report(instance: Instance) -> str:
            missing = [str(group.ranks[i]) for i, part in enumerate(instance.parts) if part is None]
            if wait_all:
                who = f"Ranks {', '.join(missing)}"
            else:
                who = f"Rank {missing[0]}"
            return f"[Rank {state.rank}]: {who} failed to pass monitoredBarrier in {int(seconds * 1000)} ms"

        first = group.index_of(state.rank) == 0
        self.issue(state, group, MonitoredBarrier(), False, (seconds, report) if first else None)

    def explain_deadlock(self, ranks: list[RankState], blocked: list[Agent]) -> Bug | None:
        """A rank stuck in a collective that a finished member never issued is a mismatch."""
        for agent in blocked:
            state = getattr(agent, "handle", None)
            instance = state.waiting_in if isinstance(state, RankState) else None
            if instance is None:
                continue
            bug = self.unjoined(instance, state.rank, ranks)  # type: ignore[union-attr]
            if bug is not None:
                return bug
        return None

    def unjoined(self, instance: Instance, waiter: int, ranks: list[RankState]) -> Bug | None:
        """The mismatch when a member that finished (or is exiting) never issued ``instance``."""
        for index, member in enumerate(instance.group.ranks):
            if instance.parts[index] is None and (ranks[member].main_agent.done or ranks[member].exiting):
                issued = self.counts.get((instance.group.name, member), 0)
                return self._never_joined(
                    instance,
                    waiter,
                    member,
                    f"rank {member} issued {issued} collectives on {instance.group} and finished, "
                    f"but rank {waiter} waits in #{instance.seq} {instance.op}",
                )
        return None

    def unfinished(self) -> Bug | None:
        """After a completed run: a collective some member never issued."""
        for instance in sorted(self.instances.values(), key=lambda i: i.seq):
            for index, member in enumerate(instance.group.ranks):
                if instance.parts[index] is None:
                    issuer = instance.first.state.rank  # type: ignore[union-attr]
                    issued = self.counts.get((instance.group.name, member), 0)
                    return self._never_joined(
                        instance,
                        issuer,
                        member,
                        f"rank {member} issued {issued} collectives on {instance.group}, rank {issuer} issued "
                        f"{self.counts.get((instance.group.name, issuer), 0)}: #{instance.seq} {instance.op} "
                        f"was never joined by rank {member}",
                    )
        return None

    def _never_joined(self, instance: Instance, waiter: int, absent: int, message: str) -> Bug:
        group = instance.group
        issued = self.counts.get((group.name, absent), 0)
        waiting = instance.parts[group.index_of(waiter)]  # type: ignore[index]
        last = self.last.get((group.name, absent))
        details = [f"rank {waiter} issued #{instance.seq} {waiting.signature} at {waiting.site}"]  # type: ignore[union-attr]
        if last is not None:
            details.append(f"rank {absent}'s last collective on {group} was #{issued} {last.signature} at {last.site}")
        else:
            details.append(f"rank {absent} issued no collective on {group}")
        return Bug(
            BugKind.COLLECTIVE_MISMATCH,
            message,
            details=details,
            agent=f"rank {waiter}",
        )
