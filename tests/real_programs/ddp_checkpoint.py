"""A DDP trainer with a checkpoint and a barrier, in the style of PyTorch's
``ddp-tutorial-series/multigpu.py`` and the DDP tutorial's ``demo_checkpoint``.

Rank 0 saves a snapshot every ``save_every`` epochs; after training, every
rank restores the last snapshot (as a restarted job would) and evaluates it.
``dist.barrier()`` makes sure no rank reads the snapshot before rank 0 wrote
it. ``main_no_barrier`` is the bug variant without that barrier: on some
schedules rank 1 loads a snapshot that does not exist yet (a real job reads
a stale or half-written file). The snapshot lives in the working directory,
which is fresh for every execution.
"""

import json
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

SNAPSHOT = "snapshot.pt"


class Trainer:
    def __init__(self, model, train_data, optimizer, gpu_id, save_every, barrier_after_save=True):
        self.gpu_id = gpu_id
        self.model = DDP(model.to(gpu_id), device_ids=[gpu_id])
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.barrier_after_save = barrier_after_save

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.mse_loss(output, targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in self.train_data:
            self._run_batch(source.to(self.gpu_id), targets.to(self.gpu_id))

    def _save_checkpoint(self, epoch):
        torch.save({"epoch": epoch, "model": self.model.module.state_dict()}, SNAPSHOT)

    def train(self, max_epochs):
        for epoch in range(max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0 and epoch % self.save_every == 0:
                self._save_checkpoint(epoch)
            if self.barrier_after_save and epoch % self.save_every == 0:
                dist.barrier()  # every rank waits until the snapshot is on disk

    def restore(self):
        snapshot = torch.load(SNAPSHOT, weights_only=True)
        self.model.module.load_state_dict(snapshot["model"])
        return snapshot["epoch"]


def load_train_objs():
    torch.manual_seed(0)
    train_set = TensorDataset(torch.randn(16, 8), torch.randn(16, 1))
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    return train_set, model, optimizer


def prepare_dataloader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, pin_memory=False, shuffle=False, sampler=DistributedSampler(dataset))


def run(rank, world_size, barrier_after_save, total_epochs=2, save_every=1):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    dataset, model, optimizer = load_train_objs()
    train_data = prepare_dataloader(dataset, batch_size=4)
    trainer = Trainer(model, train_data, optimizer, rank, save_every, barrier_after_save)
    trainer.train(total_epochs)
    epoch = trainer.restore()
    assert epoch == total_epochs - 1, f"rank {rank} restored the snapshot of epoch {epoch}"
    dist.destroy_process_group()
    return trainer.model.module


def report(rank, model):
    """For the real-gloo comparison test: where it asks, write this rank's final parameters."""
    directory = os.environ.get("DNSSE_COMPARE_DIR")
    if directory:
        values = {name: p.tolist() for name, p in model.named_parameters()}
        with open(os.path.join(directory, f"ddp-rank{rank}.json"), "w") as file:
            json.dump(values, file)


def main(rank, world_size):
    report(rank, run(rank, world_size, barrier_after_save=True))


def main_no_barrier(rank, world_size):
    run(rank, world_size, barrier_after_save=False)
