"""Programs whose verdict depends on the backend: gloo's semantics or NCCL's.

Each takes ``backend`` as an input, so one program runs under both:
``--input backend=gloo`` and ``--input backend=nccl``.

What the two backends do, as the verdicts below rely on it:

- gloo: a collective returns when it is complete; ``isend``/``irecv`` run on
  gloo's own threads, whatever order the ranks post them in; a blocking
  ``send`` of a small tensor returns only once the peer posted its ``recv``
  (measured: two processes that both ``send`` 4 floats first time out).
- NCCL: every operation returns to the host once enqueued on a CUDA stream;
  an unbatched ``send``/``recv`` "is blocking for the GPU" until the peer's
  matching kernel runs, and operations that must progress together have to
  be fused in one group (NCCL's API reference for ``ncclSend``/``ncclRecv``);
  torch runs the unbatched ones of a pair of ranks on one stream, in order.
"""

from typing import Literal

import torch
import torch.distributed as dist

Backend = Literal["gloo", "nccl"]


def isend_before_irecv(rank, world_size, backend: Backend = "gloo"):
    """Both ranks isend, then irecv, unbatched. gloo: fine. NCCL: both streams wait in their send."""
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    peer = 1 - rank
    mine, theirs = torch.full((4,), float(rank)), torch.zeros(4)
    sent = dist.isend(mine, peer)
    received = dist.irecv(theirs, peer)
    sent.wait()
    received.wait()
    assert theirs.tolist() == [float(peer)] * 4
    return theirs


def batched_exchange(rank, world_size, backend: Backend = "gloo"):
    """The same exchange as one batch_isend_irecv: one NCCL group, correct under both."""
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    peer = 1 - rank
    mine, theirs = torch.full((4,), float(rank)), torch.zeros(4)
    ops = [dist.P2POp(dist.isend, mine, peer), dist.P2POp(dist.irecv, theirs, peer)]
    for request in dist.batch_isend_irecv(ops):
        request.wait()
    assert theirs.tolist() == [float(peer)] * 4
    return theirs


def all_reduce_as_barrier(rank, world_size, backend: Backend = "gloo"):
    """Rank 1 writes a file, then both all_reduce; rank 0 reads the file after its all_reduce.

    gloo: rank 0's all_reduce returns only once rank 1 joined, after the
    write. NCCL: it returns once enqueued, so rank 0 may read first.
    """
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    flag = torch.ones(1)
    if rank == 1:
        with open("ready.txt", "w") as file:
            file.write("go")
    dist.all_reduce(flag)
    if rank == 0:
        with open("ready.txt") as file:
            assert file.read() == "go"
    return flag


def item_after_all_reduce(rank, world_size, backend: Backend = "gloo"):
    """As above, but rank 0 reads the result with .item() first, which waits for the stream: correct under both."""
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    flag = torch.ones(1)
    if rank == 1:
        with open("ready.txt", "w") as file:
            file.write("go")
    dist.all_reduce(flag)
    assert flag.item() == 2.0
    if rank == 0:
        with open("ready.txt") as file:
            assert file.read() == "go"
    return flag


def wait_as_barrier(rank, world_size, backend: Backend = "gloo"):
    """As all_reduce_as_barrier, with an async all_reduce and Work.wait() before rank 0 reads the file.

    gloo: wait() returns once the all_reduce is complete, after rank 1's
    write. NCCL: wait() only makes the compute stream wait for it (torch's
    documentation of Work.wait), so the host goes on and may read first.
    """
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    flag = torch.ones(1)
    if rank == 1:
        with open("ready.txt", "w") as file:
            file.write("go")
    dist.all_reduce(flag, async_op=True).wait()
    if rank == 0:
        with open("ready.txt") as file:
            assert file.read() == "go"
    return flag


def item_after_wait(rank, world_size, backend: Backend = "gloo"):
    """As wait_as_barrier, but rank 0 reads the result with .item() first, which waits on the host: correct under both."""
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    flag = torch.ones(1)
    if rank == 1:
        with open("ready.txt", "w") as file:
            file.write("go")
    work = dist.all_reduce(flag, async_op=True)
    work.wait()
    assert flag.item() == 2.0
    if rank == 0:
        with open("ready.txt") as file:
            assert file.read() == "go"
    return flag


def work_synchronize_then_read(rank, world_size, backend: Backend = "gloo"):
    """An async all_reduce read after Work.synchronize() and no wait().

    NCCL: synchronize() is wait(): the read, a kernel, runs after the
    collective. gloo: synchronize() does not wait for CPU work (measured:
    it returns at once, is_completed() still False): a read before wait().
    """
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    value = torch.full((2,), float(rank + 1))
    work = dist.all_reduce(value, async_op=True)
    work.synchronize()
    total = value.sum().item()
    work.wait()
    assert total == 6.0
    return value


def barrier_between(rank, world_size, backend: Backend = "gloo"):
    """barrier() blocks the host under NCCL too (ProcessGroupNCCL synchronizes it): correct under both."""
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    if rank == 1:
        with open("ready.txt", "w") as file:
            file.write("go")
    dist.barrier()
    if rank == 0:
        with open("ready.txt") as file:
            assert file.read() == "go"


def synchronize_then_read(rank, world_size, backend: Backend = "gloo"):
    """An async all_reduce read after torch.cuda.synchronize() and no wait().

    NCCL: synchronize() waits for every stream, so the read is safe. gloo:
    synchronize() knows nothing of gloo's threads: a read before wait().
    """
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    value = torch.full((2,), float(rank + 1))
    work = dist.all_reduce(value, async_op=True)
    torch.cuda.synchronize()
    total = value.sum().item()
    work.wait()
    assert total == 6.0
    return value


def send_before_recv(rank, world_size, backend: Backend = "gloo"):
    """Both ranks send, then recv: a host deadlock under gloo, a stream hang under NCCL."""
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    peer = 1 - rank
    mine, theirs = torch.full((4,), float(rank)), torch.zeros(4)
    dist.send(mine, peer)
    dist.recv(theirs, peer)


def add_after_send(rank, world_size, backend: Backend = "gloo"):
    """Changing a sent tensor after a blocking send returned: correct under both.

    NCCL's host returns early, but the add is a kernel ordered after the
    send on the stream, so the peer receives the old values.
    """
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    data = torch.full((3,), 5.0)
    if rank == 0:
        dist.send(data, 1)
        data.add_(1)
    else:
        dist.recv(data, 0)
        assert data.tolist() == [5.0, 5.0, 5.0]


def side_group_as_barrier(rank, world_size, backend: Backend = "gloo"):
    """all_reduce_as_barrier on a group made with new_group(backend=backend); the default group is gloo's.

    The side group's backend decides: gloo, correct; NCCL, rank 0 may read first.
    """
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    side = dist.new_group(list(range(world_size)), backend=backend)
    flag = torch.ones(1)
    if rank == 1:
        with open("ready.txt", "w") as file:
            file.write("go")
    dist.all_reduce(flag, group=side)
    if rank == 0:
        with open("ready.txt") as file:
            assert file.read() == "go"
    return flag


def gloo_side_group_as_barrier(rank, world_size, backend: Backend = "gloo"):
    """The same barrier on a group made with new_group(backend="gloo"), whatever the default group's backend: correct."""
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    side = dist.new_group(list(range(world_size)), backend="gloo")
    assert dist.get_backend(side) == "gloo"
    flag = torch.ones(1)
    if rank == 1:
        with open("ready.txt", "w") as file:
            file.write("go")
    dist.all_reduce(flag, group=side)
    if rank == 0:
        with open("ready.txt") as file:
            assert file.read() == "go"
    return flag


def batch_and_collective_in_rank_order(rank, world_size, backend: Backend = "gloo"):
    """Rank 0 posts a batch_isend_irecv, then all_reduces; rank 1 all_reduces, then posts its batch.

    gloo: the batch runs on gloo's threads, so the all_reduces pair up and the
    batch completes after. NCCL: batched sends and receives run on the
    group's collective stream (ProcessGroupNCCL uses the collective
    communicator for p2p in a coalesced group), so rank 0's all_reduce waits
    behind its batch, which waits for rank 1's, which waits behind rank 1's
    all_reduce: a stream hang.
    """
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    peer = 1 - rank
    mine, theirs, total = torch.full((4,), float(rank)), torch.zeros(4), torch.ones(1)

    def exchange():
        ops = [dist.P2POp(dist.isend, mine, peer), dist.P2POp(dist.irecv, theirs, peer)]
        return dist.batch_isend_irecv(ops)

    if rank == 0:
        requests = exchange()
        dist.all_reduce(total)
    else:
        dist.all_reduce(total)
        requests = exchange()
    for request in requests:
        request.wait()
    assert theirs.tolist() == [float(peer)] * 4 and total.item() == 2.0
