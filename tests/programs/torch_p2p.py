"""Point-to-point programs: a pipeline deadlock, any-source races, batched rings."""

import torch
import torch.distributed as dist


def send_send(rank, world_size):
    peer = 1 - rank
    out = torch.tensor([float(rank)])
    dist.send(out, dst=peer)  # both ranks send first: neither reaches recv
    inbox = torch.zeros(1)
    dist.recv(inbox, src=peer)


def any_source(rank, world_size):
    if rank == 0:
        first = torch.zeros(1)
        source = dist.recv(first)
        second = torch.zeros(1)
        dist.recv(second)
        assert source == 1, f"expected rank 1's message first, got rank {source}'s"
        assert sorted([first.item(), second.item()]) == [1.0, 2.0]
    else:
        dist.send(torch.tensor([float(rank)]), dst=0)


def ordered_pair(rank, world_size):
    """Messages on one channel arrive in the order they were sent."""
    if rank == 0:
        for value in range(4):
            dist.send(torch.tensor([float(value)]), dst=1)
    else:
        got = []
        works = []
        buffers = [torch.zeros(1) for _ in range(4)]
        for buffer in buffers:
            works.append(dist.irecv(buffer, src=0))
        for work in works:
            work.wait()
        got = [b.item() for b in buffers]
        assert got == [0.0, 1.0, 2.0, 3.0], got


def batched_ring(rank, world_size):
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    out = torch.tensor([float(rank)])
    inbox = torch.zeros(1)
    ops = [dist.P2POp(dist.isend, out, right), dist.P2POp(dist.irecv, inbox, left)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    assert inbox.item() == float(left)


def objects(rank, world_size):
    if rank == 0:
        dist.send_object_list([{"step": 3}, "hi"], dst=1)
    else:
        box = [None, None]
        source = dist.recv_object_list(box, src=0)
        assert source == 0 and box == [{"step": 3}, "hi"]


def wrong_size(rank, world_size):
    if rank == 0:
        dist.send(torch.zeros(3), dst=1)
    else:
        dist.recv(torch.zeros(2), src=0)


def irecv_modified(rank, world_size):
    if rank == 0:
        dist.send(torch.ones(2), dst=1)
    else:
        buffer = torch.zeros(2)
        work = dist.irecv(buffer, src=0)
        buffer.add_(5)  # the bug: the receive buffer belongs to irecv until wait()
        work.wait()


def irecv_read_early(rank, world_size):
    if rank == 0:
        dist.send(torch.ones(2), dst=1)
    else:
        buffer = torch.zeros(2)
        work = dist.irecv(buffer, src=0)
        total = buffer.sum()  # the bug: the receive buffer belongs to irecv until wait()
        work.wait()
        assert total.item() in (0.0, 2.0)


def isend_isend(rank, world_size):
    """Both ranks isend first: the sends do not wait, so each reaches its recv."""
    peer = 1 - rank
    work = dist.isend(torch.tensor([float(rank)]), dst=peer)
    inbox = torch.zeros(1)
    dist.recv(inbox, src=peer)
    work.wait()
    assert inbox.item() == float(peer)


def blocking_then_async_all_reduce(rank, world_size):
    """The first all-reduce blocks where it is issued; the second runs as a transfer of its own until wait()."""
    first = torch.tensor([rank + 1.0])
    dist.all_reduce(first)
    second = torch.tensor([rank + 10.0])
    work = dist.all_reduce(second, async_op=True)
    work.wait()
    assert (first.item(), second.item()) == (3.0, 21.0)


def all_reduce_with_a_bad_op(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    dist.all_reduce(torch.ones(1), op="sum")
