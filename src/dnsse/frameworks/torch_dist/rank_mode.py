"""The torch function mode each rank's thread runs under.

Every torch call the rank makes passes through it, which is how two things
that torch offers no other hook for are done: reads of buffers an async
operation still owns are caught (:mod:`.guard`), and, on a machine without
CUDA, CUDA devices become the CPU (:mod:`.cpu_devices`).
"""

from __future__ import annotations

from typing import Any

from torch.overrides import TorchFunctionMode

from dnsse.engine.execution import ExecutionAborted
from dnsse.frameworks.torch_dist.cpu_devices import on_cpu
from dnsse.frameworks.torch_dist.guard import overlapping, program_frame, read_bug
from dnsse.frameworks.torch_dist.world import RankState


class RankMode(TorchFunctionMode):
    def __init__(self, state: RankState, cuda_on_cpu: bool) -> None:
        super().__init__()
        self.state = state
        self.cuda_on_cpu = cuda_on_cpu

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        state = self.state
        if state.unsettled:
            entry = overlapping(state.unsettled, func, args, kwargs)
            if entry is not None:
                execution = state.world.execution
                where = program_frame(execution.source_files)
                if where is not None:
                    execution.fail(read_bug(entry, state.rank, where, state.agent.name))
                    raise ExecutionAborted()
        if self.cuda_on_cpu:
            moved = on_cpu(func, args, kwargs, state.world.on_cuda_request)
            if moved is None:
                return args[0]
            args, kwargs = moved
        return func(*args, **kwargs)
