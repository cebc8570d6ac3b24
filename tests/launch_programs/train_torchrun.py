"""A torchrun training script in the shape of PyTorch's examples (distributed/ddp-tutorial-series/multinode.py).

Run for real with `torchrun --standalone --nproc-per-node 2 train_torchrun.py --epochs 2`.
``--save-every`` writes a checkpoint on rank 0; ``--barrier-on-save`` makes
rank 0 alone wait at a barrier there, the classic hang of such scripts.
"""

import argparse
import os

import torch
import torch.distributed as dist


def ddp_setup() -> None:
    dist.init_process_group(backend="gloo")


class Trainer:
    def __init__(self, model: torch.nn.Module, save_every: int, barrier_on_save: bool) -> None:
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.global_rank = int(os.environ["RANK"])
        self.model = model
        self.save_every = save_every
        self.barrier_on_save = barrier_on_save

    def _run_epoch(self, epoch: int) -> None:
        grad = torch.full((4,), float(self.global_rank + 1))
        dist.all_reduce(grad)
        world_size = int(os.environ["WORLD_SIZE"])
        assert grad[0].item() == world_size * (world_size + 1) / 2, grad
        with torch.no_grad():
            self.model.weight -= 0.1 * grad[: self.model.weight.numel()].view_as(self.model.weight) / world_size

    def train(self, max_epochs: int) -> None:
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if self.global_rank == 0 and epoch % self.save_every == 0:
                torch.save(self.model.state_dict(), "checkpoint.pt")
                if self.barrier_on_save:
                    dist.barrier()


def main(epochs: int, save_every: int, barrier_on_save: bool) -> None:
    ddp_setup()
    # Each process reads its own environment, and a write stays its own.
    os.environ["TRAINER_RANK"] = os.environ["RANK"]
    trainer = Trainer(torch.nn.Linear(2, 2, bias=False), save_every, barrier_on_save)
    trainer.train(epochs)
    assert os.environ["TRAINER_RANK"] == str(dist.get_rank()), "another rank's environment"
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="simple distributed training job")
    parser.add_argument("--epochs", type=int, default=2, help="total epochs to train the model")
    parser.add_argument("--save-every", type=int, default=1, help="how often to save a snapshot")
    parser.add_argument("--barrier-on-save", action="store_true", help="rank 0 waits at a barrier after saving")
    args = parser.parse_args()
    main(args.epochs, args.save_every, args.barrier_on_save)
