"""Collectives and point-to-point calls in the shapes Megatron-LM and torchtitan use.

Correct: functional collectives (``all_reduce``, ``all_gather_single``,
``reduce_scatter_single``), autograd's collectives (``torch.distributed.nn``), ``all_to_all_single`` with split sizes, the
``*_object`` collectives with gather/scatter, ``new_subgroups`` with
``monitored_barrier()``, a ring of ``P2POp`` in one ``batch_isend_irecv`` (as
Megatron's ``p2p_communication`` posts them), tagged sends and receives in
either order (under NCCL, which ignores tags, they match in order), and ranks that seed torch alike and draw alike.

Bug variants: split sizes that disagree, blocking receives in the other order
of the blocking sends' tags (gloo's send waits for its receive), a rank that
never reaches a ``monitored_barrier``, and a received activation read before
its request was waited for.
"""
import json
import os

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


def save(name, rank, **values):
    out = os.environ.get("DNSSE_COMPARE_DIR")
    if out:
        with open(os.path.join(out, f"{name}-rank{rank}.json"), "w") as f:
            json.dump({k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in values.items()}, f)


def functional(rank, world_size):
    dist.init_process_group("gloo")
    t = torch.arange(4.0) + rank
    reduced = funcol.all_reduce(t, "sum", dist.group.WORLD)
    gathered = funcol.all_gather_single(t, 0, dist.group.WORLD)
    scattered = funcol.reduce_scatter_single(torch.arange(2.0 * world_size) * (rank + 1), "sum", 0, dist.group.WORLD)
    save("funcol", rank, reduced=reduced.wait() if hasattr(reduced, "wait") else reduced, gathered=gathered + 0, scattered=scattered + 0)


def autograd_collectives(rank, world_size, backend="gloo"):
    """torch.distributed.nn's collectives, which backward goes through (imported by the rank, after the
    default group exists: its functions' ``group=group.WORLD`` default must still be each rank's own)."""
    import torch.distributed.nn.functional as dist_nn

    dist.init_process_group(backend)
    x = torch.full((3,), float(rank + 1), requires_grad=True)
    y = dist_nn.all_reduce(x * 2)
    gathered = dist_nn.all_gather(x)
    (y.sum() + sum(g.sum() * (i + 1) for i, g in enumerate(gathered))).backward()
    save("dist_nn", rank, y=y.detach(), grad=x.grad)


def autograd_collectives_nccl(rank, world_size):
    autograd_collectives(rank, world_size, backend="nccl")


def all_to_all_splits(rank, world_size):
    dist.init_process_group("gloo")
    # rank r sends (r + 1 + j) elements to rank j
    in_splits = [rank + 1 + j for j in range(world_size)]
    out_splits = [j + 1 + rank for j in range(world_size)]
    inp = torch.cat([torch.full((n,), 10.0 * rank + j) for j, n in enumerate(in_splits)])
    out = torch.empty(sum(out_splits))
    dist.all_to_all_single(out, inp, output_split_sizes=out_splits, input_split_sizes=in_splits)
    even = torch.empty(2 * world_size)
    dist.all_to_all_single(even, torch.arange(2.0 * world_size) + 100 * rank)
    save("a2a", rank, out=out, even=even)


def objects(rank, world_size):
    dist.init_process_group("gloo")
    objs = [{"rank": rank, "sq": rank * rank}]
    gathered = [None] * world_size if rank == 0 else None
    dist.gather_object(objs[0], gathered, dst=0)
    scattered = [None]
    dist.scatter_object_list(scattered, [f"item{i}" for i in range(world_size)] if rank == 0 else None, src=0)
    lst = [rank, "x", {"k": rank}] if rank == 1 else [None, None, None]
    dist.broadcast_object_list(lst, src=1)
    everyone = [None] * world_size
    dist.all_gather_object(everyone, ("r", rank))
    g = [torch.empty(3) for _ in range(world_size)] if rank == 0 else None
    dist.gather(torch.full((3,), float(rank)), g, dst=0)
    s = torch.empty(2)
    dist.scatter(s, [torch.full((2,), 5.0 + i) for i in range(world_size)] if rank == 0 else None, src=0)
    save("objects", rank, gathered=json.dumps(gathered), scattered=json.dumps(scattered), lst=json.dumps(lst),
         everyone=json.dumps(everyone), g=[t.tolist() for t in g] if g else [], s=s)


def subgroups(rank, world_size):
    dist.init_process_group("gloo")
    sub, subs = dist.new_subgroups(group_size=2)
    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=sub)
    dist.monitored_barrier()
    pairs = dist.new_group([0, world_size - 1])
    u = torch.tensor([float(rank + 1)])
    if rank in (0, world_size - 1):
        dist.all_reduce(u, group=pairs)
    save("subgroups", rank, t=t, u=u)


def p2p_batched_ring(rank, world_size):
    """Megatron's p2p_communication: one batch_isend_irecv per step, a ring."""
    dist.init_process_group("gloo")
    send = torch.full((3,), float(rank))
    recv_prev = torch.empty(3)
    recv_next = torch.empty(3)
    nxt, prv = (rank + 1) % world_size, (rank - 1) % world_size
    ops = [
        dist.P2POp(dist.isend, send, nxt),
        dist.P2POp(dist.irecv, recv_prev, prv),
        dist.P2POp(dist.isend, send * 2, prv),
        dist.P2POp(dist.irecv, recv_next, nxt),
    ]
    for req in dist.batch_isend_irecv(ops):
        req.wait()
    save("ring", rank, recv_prev=recv_prev, recv_next=recv_next)


def seeded_ranks_agree(rank, world_size):
    """Every rank seeds torch alike, so each draws the same values, as separate processes do."""
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    first = torch.randn(3)
    dist.barrier()
    second = torch.randn(3)
    everyone = [torch.empty(3) for _ in range(world_size)]
    dist.all_gather(everyone, second)
    assert all(torch.equal(t, second) for t in everyone), "ranks seeded alike drew different values"
    save("seeded", rank, first=first, second=second)


def tagged(rank, world_size):
    dist.init_process_group("gloo")
    if rank == 0:
        dist.send(torch.tensor([1.0]), 1, tag=7)
        dist.send(torch.tensor([2.0]), 1, tag=8)
        a = b = torch.zeros(1)
    elif rank == 1:
        a, b = torch.empty(1), torch.empty(1)
        wa = dist.irecv(a, 0, tag=7)
        wb = dist.irecv(b, 0, tag=8)
        wa.wait()
        wb.wait()
    else:
        a = b = torch.zeros(1)
    save("tagged", rank, a=a, b=b)


def tags_under_nccl(rank, world_size):
    """NCCL ignores tags: receives posted in the other order of the tags take the messages in order."""
    dist.init_process_group("nccl")
    if rank == 0:
        w7 = dist.isend(torch.tensor([1.0]), 1, tag=7)
        w8 = dist.isend(torch.tensor([2.0]), 1, tag=8)
        w7.wait()
        w8.wait()
        a = b = torch.zeros(1)
    elif rank == 1:
        a, b = torch.empty(1), torch.empty(1)
        dist.recv(b, 0, tag=8)
        dist.recv(a, 0, tag=7)
    else:
        a = b = torch.zeros(1)
    save("tags_nccl", rank, a=a, b=b)


def tagged_reversed(rank, world_size):
    """Receives posted in the other order of the tags: gloo matches by tag."""
    dist.init_process_group("gloo")
    if rank == 0:
        w7 = dist.isend(torch.tensor([1.0]), 1, tag=7)
        w8 = dist.isend(torch.tensor([2.0]), 1, tag=8)
        w7.wait()
        w8.wait()
        a = b = torch.zeros(1)
    elif rank == 1:
        a, b = torch.empty(1), torch.empty(1)
        dist.recv(b, 0, tag=8)
        dist.recv(a, 0, tag=7)
    else:
        a = b = torch.zeros(1)
    save("tagged_rev", rank, a=a, b=b)


def all_to_all_wrong_splits(rank, world_size):
    """Rank 0 sends 2 elements to rank 1, which expects 3."""
    dist.init_process_group("gloo")
    in_splits = [2] * world_size
    out_splits = [3 if (rank == 1 and j == 0) else 2 for j in range(world_size)]
    out = torch.empty(sum(out_splits))
    dist.all_to_all_single(out, torch.ones(sum(in_splits)), output_split_sizes=out_splits, input_split_sizes=in_splits)


def tagged_blocking_reversed(rank, world_size):
    """Blocking sends by tag 7 then 8, blocking receives by tag 8 then 7."""
    dist.init_process_group("gloo")
    if rank == 0:
        dist.send(torch.tensor([1.0]), 1, tag=7)
        dist.send(torch.tensor([2.0]), 1, tag=8)
    elif rank == 1:
        a, b = torch.empty(1), torch.empty(1)
        dist.recv(b, 0, tag=8)
        dist.recv(a, 0, tag=7)


def monitored_missing(rank, world_size):
    dist.init_process_group("gloo")
    if rank != world_size - 1:
        dist.monitored_barrier(wait_all_ranks=True)


def ring_read_before_wait(rank, world_size):
    """Megatron-style batch, reading the received activation before waiting."""
    dist.init_process_group("gloo")
    recv_prev = torch.zeros(3)
    nxt, prv = (rank + 1) % world_size, (rank - 1) % world_size
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, torch.full((3,), float(rank)), nxt), dist.P2POp(dist.irecv, recv_prev, prv)])
    total = recv_prev.sum()
    for req in reqs:
        req.wait()
    return total
