"""Every collective once, with results checked against values worked out by hand."""

import torch
import torch.distributed as dist


def main(rank, world_size):
    results = {}
    t = torch.tensor([rank + 1.0, 10.0 * (rank + 1)])
    dist.all_reduce(t)
    results["all_reduce_sum"] = t.tolist()

    for name, op in [("max", dist.ReduceOp.MAX), ("min", dist.ReduceOp.MIN), ("product", dist.ReduceOp.PRODUCT)]:
        t = torch.tensor([rank + 2.0])
        dist.all_reduce(t, op=op)
        results[f"all_reduce_{name}"] = t.tolist()

    t = torch.tensor([rank + 2.0])
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    results["all_reduce_avg"] = t.tolist()

    b = torch.tensor([0b0110 + rank])
    dist.all_reduce(b, op=dist.ReduceOp.BXOR)
    results["all_reduce_bxor"] = b.tolist()

    t = torch.full((3,), float(rank))
    dist.broadcast(t, src=1)
    results["broadcast"] = t.tolist()

    t = torch.tensor([rank + 1.0])
    dist.reduce(t, dst=0)
    results["reduce"] = t.tolist()

    out = [torch.zeros(2) for _ in range(world_size)]
    dist.all_gather(out, torch.tensor([rank, rank * 10.0]))
    results["all_gather"] = [o.tolist() for o in out]

    flat = torch.zeros(world_size * 2)
    dist.all_gather_into_tensor(flat, torch.tensor([rank, rank * 10.0]))
    results["all_gather_into_tensor"] = flat.tolist()

    gathered = [torch.zeros(1) for _ in range(world_size)] if rank == 0 else None
    dist.gather(torch.tensor([rank + 5.0]), gathered, dst=0)
    results["gather"] = [g.tolist() for g in gathered] if gathered else None

    piece = torch.zeros(2)
    pieces = [torch.tensor([i, i + 0.5]) for i in range(world_size)] if rank == 0 else None
    dist.scatter(piece, pieces, src=0)
    results["scatter"] = piece.tolist()

    out = torch.zeros(1)
    dist.reduce_scatter(out, [torch.tensor([rank * 10.0 + i]) for i in range(world_size)])
    results["reduce_scatter"] = out.tolist()

    out = torch.zeros(2)
    dist.reduce_scatter_tensor(out, torch.arange(world_size * 2, dtype=torch.float32) + rank)
    results["reduce_scatter_tensor"] = out.tolist()

    outs = [torch.zeros(1) for _ in range(world_size)]
    dist.all_to_all(outs, [torch.tensor([rank * 10.0 + i]) for i in range(world_size)])
    results["all_to_all"] = [o.tolist() for o in outs]

    out = torch.zeros(world_size)
    dist.all_to_all_single(out, torch.arange(world_size, dtype=torch.float32) + 10 * rank)
    results["all_to_all_single"] = out.tolist()

    splits_in, splits_out = ([1, 2], [1, 2]) if rank == 0 else ([2, 1], [2, 1])
    out = torch.zeros(3)
    dist.all_to_all_single(out, torch.arange(3.0) + 10 * rank, splits_out, splits_in)
    results["all_to_all_single_uneven"] = out.tolist()

    dist.barrier()

    objs = [None] * world_size
    dist.all_gather_object(objs, {"rank": rank})
    results["all_gather_object"] = objs

    lst = [rank, "x"] if rank == 0 else [None, None]
    dist.broadcast_object_list(lst, src=0)
    results["broadcast_object_list"] = lst

    got = [None] * world_size if rank == 1 else None
    dist.gather_object(("r", rank), got, dst=1)
    results["gather_object"] = got

    mine = [None]
    dist.scatter_object_list(mine, [f"to {i}" for i in range(world_size)] if rank == 0 else None, src=0)
    results["scatter_object_list"] = mine

    if rank == 0:
        dist.send(torch.tensor([42.0]), dst=1)
    elif rank == 1:
        t = torch.zeros(1)
        source = dist.recv(t, src=0)
        results["recv"] = (t.tolist(), source)
    return results


def expected(rank, world_size):
    """What gloo computes for main(rank, world_size) with world_size == 2."""
    assert world_size == 2
    results = {
        "all_reduce_sum": [3.0, 30.0],
        "all_reduce_max": [3.0],
        "all_reduce_min": [2.0],
        "all_reduce_product": [6.0],
        "all_reduce_avg": [2.5],
        "all_reduce_bxor": [0b0110 ^ 0b0111],
        "broadcast": [1.0, 1.0, 1.0],
        "reduce": [3.0] if rank == 0 else [2.0],
        "all_gather": [[0.0, 0.0], [1.0, 10.0]],
        "all_gather_into_tensor": [0.0, 0.0, 1.0, 10.0],
        "gather": [[5.0], [6.0]] if rank == 0 else None,
        "scatter": [float(rank), rank + 0.5],
        "reduce_scatter": [0.0 + 10.0 + 2 * rank],
        "reduce_scatter_tensor": [[1.0, 3.0], [5.0, 7.0]][rank],
        "all_to_all": [[0.0 + rank], [10.0 + rank]],
        "all_to_all_single": [[0.0, 10.0], [1.0, 11.0]][rank],
        "all_to_all_single_uneven": [[0.0, 10.0, 11.0], [1.0, 2.0, 12.0]][rank],
        "all_gather_object": [{"rank": 0}, {"rank": 1}],
        "broadcast_object_list": [0, "x"],
        "gather_object": [("r", 0), ("r", 1)] if rank == 1 else None,
        "scatter_object_list": [f"to {rank}"],
    }
    if rank == 1:
        results["recv"] = ([42.0], 0)
    return results


def checked(rank, world_size):
    assert main(rank, world_size) == expected(rank, world_size)


def run_under_gloo(rank, world_size, store_path, queue):
    """Run main() in a real gloo process group; put (rank, results or an error text) on queue."""
    try:
        dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=world_size)
        queue.put((rank, main(rank, world_size)))
        dist.destroy_process_group()
    except Exception as error:  # noqa: BLE001 - the parent decides to skip
        queue.put((rank, f"{type(error).__name__}: {error}"))
