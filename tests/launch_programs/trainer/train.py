"""``torchrun -m trainer.train``: a package's training module, with a relative import."""

import argparse
import logging
import os

import torch
import torch.distributed as dist

from .data import shard

logger = logging.getLogger(__name__)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=6)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    mine = shard(list(range(args.items)), rank, world_size)
    count = torch.tensor([len(mine)])
    dist.all_reduce(count)
    assert count.item() == args.items, count
    assert logger.name == "__main__"
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
