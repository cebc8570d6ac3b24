"""Point-to-point messages: send, recv (also from any source), isend, irecv.

``send`` is a rendezvous: it returns only when a matching receive took the
data, as gloo and NCCL may do for any message. That is the strictest
behaviour a program can meet, and it is what shows the classic pipeline
deadlock where two ranks both send first. ``isend`` returns at once; its Work
completes when a receive took the message.

Messages of one (group, src, dst, tag) are matched first in, first out (MPI's
non-overtaking rule), and a receive never takes a message that an earlier
receive of the same rank could take. A pending ``irecv`` is a
:class:`~dnsse.engine.agent.StepAgent` that becomes runnable when a matching
message is waiting; a blocking ``recv`` does the same match on its own rank.
When several sources could match an any-source receive (the oldest message
from each), the chooser picks one (a ``match`` choice), so the search explores
every arrival order.

What a step touches is named per message: the k-th message of a channel is
``p2p:SRC->DST:TAG#k``. A send writes its message, a match takes (writes) the
one it matched and reads the next message of each other source it could have
matched, whether posted or not. So a send races only with the receives that
could take its message; posting a receive races with nothing.

Under NCCL semantics (:mod:`.streams`) ``send`` and ``recv`` return once
enqueued, like ``isend`` and ``irecv``: an unbatched one goes on the stream of
its pair of ranks, a ``batch_isend_irecv`` is one entry of the group's
stream, and a message is taken only while both the send and the receive are
running on their streams.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from dnsse.engine.agent import FINISHED, Signal, StepAgent, Wait
from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.choices import ChoiceKind
from dnsse.engine.execution import ExecutionAborted
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.torch_dist.groups import WORLD_NAME
from dnsse.frameworks.torch_dist.mode_off import apart
from dnsse.frameworks.torch_dist.ops import describe, store
from dnsse.frameworks.torch_dist.streams import P2P_STREAM, Entry, batch_frame, collective_stream, running, stream_objects, uses_nccl
from dnsse.frameworks.torch_dist.work import (
    INPUT_BEFORE_READ,
    OUTPUT_AFTER_WRITE,
    RECEIVE_BEFORE_ARRIVAL,
    buffer_bug,
    same,
)
from dnsse.frameworks.torch_dist.world import call_site

if TYPE_CHECKING:
    from dnsse.frameworks.torch_dist.collectives import Instance
    from dnsse.frameworks.torch_dist.groups import Group
    from dnsse.frameworks.torch_dist.world import RankState


def _channel(group: Group, src: int | str, dst: int, tag: int) -> str:
    suffix = "" if group.name == WORLD_NAME else f"@{group.name}"
    return f"p2p:{src}->{dst}:{tag}{suffix}"


def _payload_text(payload: object) -> str:
    if isinstance(payload, torch.Tensor):
        return describe(payload)
    return f"{len(payload)} objects (send_object_list)"  # type: ignore[arg-type]


@dataclass(eq=False)
class Message:
    """A posted send; ``payload`` is the live buffer of a blocking send, a clone for isend."""

    state: RankState
    group: Group
    dst: int
    tag: int
    payload: object
    site: str
    op: str
    buffer: torch.Tensor | None = None  # isend: the program's buffer, checked at transfer
    slot: str = ""  # the message's name: its channel and its number in it
    matched: bool = False
    # Fired with matched: a blocking send sleeps until then.
    received: Signal = field(default_factory=Signal)
    instance: Instance | None = None
    # What the transfer touches: a Work.wait() on it depends on those steps.
    touches: tuple[tuple[str, Access], ...] = ()
    entry: Entry | None = None
    # The virtual device's clock after the transfer's kernel (see .virtual_device), for Work.wait() to join.
    kernel: dict[str, int] | None = None

    @property
    def done(self) -> bool:
        return self.matched

    def buffers(self) -> list:
        return [self.buffer] if self.buffer is not None else []

    def describe_wait(self) -> str:
        return f"Work.wait() of {self.op} to {self.dst} (tag {self.tag}) on rank {self.state.rank}"

    def describe_send(self) -> str:
        return f"{self.op}(dst={self.dst}, tag={self.tag}) on rank {self.state.rank} to be received"

    def guarded(self) -> list:
        return []  # reading a send buffer is allowed; writing it is caught at the transfer

    def verify(self) -> Bug | None:
        return None  # the data left at the transfer, which checked the buffer

    def result(self) -> list:
        return [self.buffer]

    def source_rank(self) -> int:
        raise RuntimeError("source_rank() is only defined for the Work of an irecv")


@dataclass(eq=False)
class Receive:
    """A posted receive; ``src`` is ``None`` for any source."""

    state: RankState
    group: Group
    src: int | None
    tag: int
    buffer: object
    site: str
    op: str
    snapshot: torch.Tensor | None = None  # irecv: the buffer at issue, to catch early writes
    source: int | None = None
    done: bool = False
    written: torch.Tensor | None = None
    instance: Instance | None = None
    touches: tuple[tuple[str, Access], ...] = ()
    entry: Entry | None = None
    # The virtual device's clock after the transfer's kernel (see .virtual_device), for Work.wait() to join.
    kernel: dict[str, int] | None = None

    def buffers(self) -> list:
        return [self.buffer] if isinstance(self.buffer, torch.Tensor) else []

    def call_text(self) -> str:
        return f"{self.op}(src={'any' if self.src is None else self.src}, tag={self.tag})"

    def describe(self) -> str:
        return f"{self.call_text()} on rank {self.state.rank}"

    def describe_wait(self) -> str:
        return f"Work.wait() of {self.describe()}"

    def guarded(self) -> list:
        return [self.buffer] if isinstance(self.buffer, torch.Tensor) else []

    def verify(self) -> Bug | None:
        if self.written is None or same([self.buffer], [self.written]):  # type: ignore[list-item]
            return None
        return buffer_bug(self.op, self.state.rank, OUTPUT_AFTER_WRITE, self.site, self.state.agent.name)

    def result(self) -> list:
        return [self.buffer]

    def source_rank(self) -> int:
        if self.source is None:
            raise RuntimeError("source_rank(): the irecv has not completed; call wait() first")
        return self.group.index_of(self.source)  # type: ignore[return-value]  # torch's is a group rank


def _enqueue(state: RankState, group: Group, peer: int | None, part: Message | Receive) -> tuple[str, str]:
    """Put a send or receive on its NCCL stream: its pair's, or its batch's. Returns the stream's key and label."""
    batch = batch_frame()
    if batch is not None or peer is None:
        key, label = collective_stream(group)
    else:
        low, high = sorted((state.rank, peer))
        key, label = f"{P2P_STREAM}{group.name}:{low}-{high}", f"send/recv between ranks {low} and {high}"
    state.streams.enqueue(state.rank, key, label, part, batch)
    return key, label


def _log_kernel(state: RankState, part: Message | Receive, stream: tuple[str, str] | None, tensor: object) -> None:
    """Log the transfer's kernel on the rank's virtual device: a send reads its tensor, a receive writes it."""
    if state.device is not None and isinstance(tensor, torch.Tensor):
        reads, writes = ([tensor], []) if isinstance(part, Message) else ([], [tensor])
        part.kernel = state.device.collective(part.op, part.site, stream, reads, writes)


def _check_peer(api: str, group: Group, rank: int, peer: int, role: str) -> None:
    if group.index_of(peer) is None:
        raise ValueError(f"{api}: {role} rank {peer} is not in {group}")
    if peer == rank:
        raise ValueError(f"{api}: invalid {role} rank {peer}: it is the rank of the calling process")


@dataclass(eq=False)
class Mailboxes:
    """Posted sends per channel and posted receives per rank, for one execution."""

    queues: dict[tuple[str, int, int, int], deque[Message]] = field(default_factory=dict)
    pending: dict[int, list[Receive]] = field(default_factory=dict)
    # Per channel: messages posted, and messages taken (the number of the next one).
    posted: dict[tuple[str, int, int, int], int] = field(default_factory=dict)
    taken: dict[tuple[str, int, int, int], int] = field(default_factory=dict)

    def send(
        self, state: RankState, group: Group, dst: int, tag: int, payload: object, op: str, asynchronous: bool
    ) -> Message:
        """Post a message; a blocking send also waits until it was received."""
        _check_peer(op, group, state.rank, dst, "destination")
        asynchronous = asynchronous or uses_nccl(state, group)
        execution = state.world.execution
        key = (group.name, state.rank, dst, tag)
        # Only this rank posts to its channels: the message's number is known before the point.
        slot = f"{_channel(group, state.rank, dst, tag)}#{self.posted.get(key, 0)}"
        execution.yield_point(state.agent, Operation(op, ((slot, Access.WRITE),), f"{op} to {dst} tag {tag}"))
        self.posted[key] = self.posted.get(key, 0) + 1
        site = call_site(execution.source_files)
        # A Work.wait() on the message depends on the match that took it.
        touches = ((slot, Access.READ),)
        if asynchronous:
            message = Message(state, group, dst, tag, payload.detach().clone(), site, op, buffer=payload, slot=slot, touches=touches)  # type: ignore[attr-defined]
        else:
            message = Message(state, group, dst, tag, payload, site, op, slot=slot, touches=touches)
        stream = _enqueue(state, group, dst, message) if uses_nccl(state, group) else None
        _log_kernel(state, message, stream, payload)
        self.queues.setdefault(key, deque()).append(message)
        execution.emit(state.agent, "send", {"src": state.rank, "dst": dst, "tag": tag})
        if asynchronous:
            # The receiver may take the message before the code after isend runs.
            execution.yield_point(state.agent, Operation(f"{op}.issued", ()))
        else:
            execution.block(
                state.agent,
                Wait(lambda: message.matched, message.describe_send, signal=message.received),
                Operation(f"{op}.done", touches),
            )
        return message

    def receive(
        self,
        state: RankState,
        group: Group,
        src: int | None,
        tag: int,
        buffer: object,
        op: str,
        asynchronous: bool,
    ) -> Receive:
        """Post a receive; a blocking one returns after the data arrived."""
        if src is not None:
            _check_peer(op, group, state.rank, src, "source")
        asynchronous = asynchronous or uses_nccl(state, group)
        execution = state.world.execution
        # Posting a receive touches no message: the match does, when it happens.
        execution.yield_point(state.agent, Operation(op, (), f"{op} from {'any' if src is None else src} tag {tag}"))
        receive = Receive(state, group, src, tag, buffer, call_site(execution.source_files), op)
        stream = _enqueue(state, group, src, receive) if uses_nccl(state, group) else None
        _log_kernel(state, receive, stream, buffer)
        self.pending.setdefault(state.rank, []).append(receive)
        objects = receive.touches = self._next_messages(receive)
        if asynchronous:
            receive.snapshot = buffer.detach().clone()  # type: ignore[attr-defined]
            StepAgent(
                execution,
                f"rank {state.rank} {receive.call_text()}",
                lambda: apart(self._match_step, receive),  # run from any scheduling point of any rank
                Wait(lambda: bool(self.candidates(receive)), receive.describe),
                # It writes the receiving rank's buffer, too.
                Operation(
                    f"{op}.match", objects + ((f"agent#{state.agent.id}", Access.READ),) + stream_objects(receive)
                ),
            )
            # The match may happen before the code after irecv runs.
            execution.yield_point(state.agent, Operation(f"{op}.issued", ()))
            return receive
        if not self.candidates(receive):
            execution.block(
                state.agent,
                Wait(lambda: bool(self.candidates(receive)), receive.describe),
                Operation(f"{op}.match", objects),
            )
        bug = self._match(receive)
        if bug is not None:
            execution.fail(bug)
            raise ExecutionAborted()
        return receive

    def _next_messages(self, receive: Receive) -> tuple[tuple[str, Access], ...]:
        """The next message of each channel the receive may take from, posted or not, as reads."""
        group, dst, tag = receive.group, receive.state.rank, receive.tag
        sources = group.ranks if receive.src is None else (receive.src,)
        return tuple(
            (f"{_channel(group, src, dst, tag)}#{self.taken.get((group.name, src, dst, tag), 0)}", Access.READ)
            for src in sources
            if src != dst
        )

    def candidates(self, receive: Receive) -> list[Message]:
        """The messages ``receive`` may take now: the oldest from each allowed source."""
        if not running(receive):
            return []
        dst = receive.state.rank
        name = receive.group.name
        taken_earlier: list[int | None] = []
        for other in self.pending[dst]:
            if other is receive:
                break
            if other.tag == receive.tag and other.group.name == name:
                if other.src is None:
                    return []
                taken_earlier.append(other.src)
        sources = receive.group.ranks if receive.src is None else (receive.src,)
        found = []
        for src in sources:
            if src == dst or src in taken_earlier:
                continue
            queue = self.queues.get((name, src, dst, receive.tag))
            # Under NCCL the oldest message is taken only while its send kernel runs.
            if queue and running(queue[0]):
                found.append(queue[0])
        return found

    def _match_step(self, receive: Receive) -> object:
        bug = self._match(receive)
        if bug is not None:
            receive.state.world.execution.fail(bug)
        return FINISHED

    def _match(self, receive: Receive) -> Bug | None:
        execution = receive.state.world.execution
        options = self.candidates(receive)
        message = options[execution.choose_value(ChoiceKind.MATCH, len(options))]
        touched = self._next_messages(receive) + ((message.slot, Access.WRITE),) + stream_objects(message)
        if message.buffer is not None:
            # The transfer reads the isend's live buffer (it must be unchanged):
            # agent#N is written by every step of the sender's agent.
            touched += ((f"agent#{message.state.agent.id}", Access.READ),)
        execution.touch(touched)
        receive.touches = ((message.slot, Access.READ),)
        bug = self._transfer_problem(receive, message)
        if bug is not None:
            return bug
        dst = receive.state.rank
        key = (receive.group.name, message.state.rank, dst, receive.tag)
        self.queues[key].popleft()
        self.taken[key] = self.taken.get(key, 0) + 1
        if isinstance(message.payload, torch.Tensor):
            store(receive.buffer, message.payload)  # type: ignore[arg-type]
        else:
            for index, value in enumerate(message.payload):  # type: ignore[attr-defined]
                receive.buffer[index] = copy.deepcopy(value)  # type: ignore[index]
        if receive.snapshot is not None:
            receive.written = receive.buffer.detach().clone()  # type: ignore[attr-defined]
        message.matched = True
        message.received.fire()
        receive.done = True
        receive.source = message.state.rank
        self.pending[dst].remove(receive)
        execution.emit(receive.state.agent, "recv", {"src": message.state.rank, "dst": dst, "tag": receive.tag})
        return None

    def _transfer_problem(self, receive: Receive, message: Message) -> Bug | None:
        sender = message.state
        if message.buffer is not None and not same([message.buffer], [message.payload]):  # type: ignore[list-item]
            return buffer_bug(message.op, sender.rank, INPUT_BEFORE_READ, message.site, sender.agent.name)
        if receive.snapshot is not None and not same([receive.buffer], [receive.snapshot]):  # type: ignore[list-item]
            return buffer_bug(
                receive.op, receive.state.rank, RECEIVE_BEFORE_ARRIVAL, receive.site, receive.state.agent.name
            )
        payload, buffer = message.payload, receive.buffer
        if isinstance(payload, torch.Tensor) and isinstance(buffer, torch.Tensor):
            fits = payload.dtype == buffer.dtype and payload.numel() == buffer.numel()
        else:
            fits = not isinstance(payload, torch.Tensor) and not isinstance(buffer, torch.Tensor)
            fits = fits and len(payload) == len(buffer)  # type: ignore[arg-type]
        if fits:
            return None
        return Bug(
            BugKind.EXCEPTION,
            f"{receive.op} on rank {receive.state.rank} posted {_payload_text(buffer)} but rank {sender.rank} "
            f"sent {_payload_text(payload)} (tag {receive.tag})",
            details=[
                f"rank {sender.rank}: {message.op} at {message.site}",
                f"rank {receive.state.rank}: {receive.op} at {receive.site}",
            ],
            agent=receive.state.agent.name,
        )
