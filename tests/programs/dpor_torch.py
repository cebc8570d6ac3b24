"""A parameter server of three ranks (world size 3): a header names the sender, then its payload follows."""

import torch
import torch.distributed as dist

ROUNDS = 2


def parameter_server(rank, world_size):
    """Rank 0 takes a header from any worker, then that worker's gradient: correct."""
    _serve(rank, world_size, ROUNDS)


def parameter_server_three_rounds(rank, world_size):
    """The same server over three rounds: 20 orders in which the headers can arrive."""
    _serve(rank, world_size, 3)


def parameter_server_one_round(rank, world_size):
    """The same server over one round, small enough to run every schedule of."""
    _serve(rank, world_size, 1)


def _serve(rank, world_size, rounds):
    if rank == 0:
        total = torch.zeros(1)
        for _ in range(rounds * (world_size - 1)):
            header = torch.zeros(1)
            src = dist.recv(header)
            grad = torch.zeros(1)
            dist.recv(grad, src=src)
            assert int(header.item()) == src
            total += grad
        assert total.item() == rounds * sum(range(1, world_size))
    else:
        for _ in range(rounds):
            dist.send(torch.tensor([float(rank)]), dst=0)
            dist.send(torch.tensor([float(rank)]), dst=0)


def parameter_server_any_payload(rank, world_size):
    """The payload receive is left as any source: it may take another worker's header."""
    if rank == 0:
        for _ in range(ROUNDS * (world_size - 1)):
            header = torch.zeros(1)
            src = dist.recv(header)
            grad = torch.zeros(1)
            payload_src = dist.recv(grad)
            assert payload_src == src, f"the payload of rank {src} came from rank {payload_src}"
    else:
        for _ in range(ROUNDS):
            dist.send(torch.tensor([float(rank)]), dst=0)
            dist.send(torch.tensor([float(rank)]), dst=0)
