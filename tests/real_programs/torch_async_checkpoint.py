"""torchtitan's asynchronous checkpoint: ``dcp.async_save`` on a gloo group of its own.

torchtitan's ``CheckpointManager`` makes ``dist.new_group(backend="gloo")`` for
checkpointing (a CPU backend beside the training one), starts the save with
``dcp.async_save(state_dict, checkpoint_id=..., process_group=pg)``, keeps
training, and waits on the returned future before the next save or a load.

Bug variant: ``load_before_save_finished``, which loads the checkpoint back
without waiting on the future first.
"""
import json
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn


def _compare(name, rank, **values):
    out = os.environ.get("DNSSE_COMPARE_DIR")
    if out:
        with open(os.path.join(out, f"{name}-rank{rank}.json"), "w") as f:
            json.dump({k: v if isinstance(v, list) else v.tolist() for k, v in values.items()}, f)


class CheckpointManager:
    def __init__(self, model, folder):
        self.model = model
        self.folder = folder
        self.pg = dist.new_group(backend="gloo")
        self.async_future = None

    def _wait_for_staged(self):
        if self.async_future is not None:
            self.async_future.result()
            self.async_future = None

    def save(self, step):
        self._wait_for_staged()
        state = {"model": self.model.state_dict()}
        checkpoint_id = os.path.join(self.folder, f"step-{step}")
        self.async_future = dcp.async_save(state, checkpoint_id=checkpoint_id, process_group=self.pg)

    def load(self, step, wait=True):
        if wait:
            self._wait_for_staged()
        state = {"model": self.model.state_dict()}
        dcp.load(state, checkpoint_id=os.path.join(self.folder, f"step-{step}"), process_group=self.pg)
        self.model.load_state_dict(state["model"])


def _train(rank, wait):
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    manager = CheckpointManager(model, "ckpt")
    with torch.no_grad():
        model.weight.add_(1.0)
    manager.save(1)
    saved = model.weight.detach().clone()
    with torch.no_grad():
        model.weight.zero_()
    manager.load(1, wait=wait)
    assert torch.equal(model.weight, saved), "the loaded weights are not the saved ones"
    manager._wait_for_staged()
    dist.barrier()
    devices = sorted(dist.distributed_c10d._device_capability(manager.pg))
    _compare("async_ckpt", rank, weight=model.weight.detach(), devices=devices)
    dist.destroy_process_group()


def train(rank, world_size):
    _train(rank, wait=True)


def load_before_save_finished(rank, world_size):
    _train(rank, wait=False)
