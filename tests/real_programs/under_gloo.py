"""Runs correct programs of this corpus under real gloo, for the comparison test.

Each worker process joins a real gloo group through a file store and calls
the programs as torchrun would; their ``init_process_group("nccl", ...)``
gets gloo, and CUDA devices are the CPU (dnsse's own rewrite, which only
moves devices and touches no communication), so that a CPU-only machine runs
them. Each program writes its results where ``DNSSE_COMPARE_DIR`` says.
"""

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent


def run(rank, world_size, store_path, targets, out_dir, queue):
    try:
        import torch
        import torch.distributed as dist
        from torch.overrides import TorchFunctionMode

        from dnsse.frameworks.torch_dist.cpu_devices import cuda_stand_ins, on_cpu

        def notice(what):
            return None

        class OnCpu(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                moved = on_cpu(func, args, kwargs or {}, notice)
                return args[0] if moved is None else func(*moved[0], **moved[1])

        for owner, name, value in list(cuda_stand_ins(notice)):
            setattr(owner, name, value)
        real_init = dist.init_process_group
        store = dist.FileStore(store_path, world_size)

        def init_gloo(backend=None, *args, **kwargs):
            if not dist.is_initialized():
                real_init("gloo", store=store, rank=rank, world_size=world_size)

        dist.init_process_group = init_gloo
        dist.destroy_process_group = lambda group=None: None
        os.environ["DNSSE_COMPARE_DIR"] = out_dir
        os.chdir(out_dir)
        torch.set_num_threads(1)
        for target in targets:
            file, function = target.split(":")
            spec = importlib.util.spec_from_file_location(file[:-3], HERE / file)
            module = importlib.util.module_from_spec(spec)
            sys.modules[file[:-3]] = module
            spec.loader.exec_module(module)
            with OnCpu():
                getattr(module, function)(rank, world_size)
            dist.barrier()
        queue.put((rank, "ok"))
    except Exception as error:  # noqa: BLE001 - reported to the test, which then skips
        queue.put((rank, f"{type(error).__name__}: {error}"))
