"""Parts of torch that run outside the controlled ranks: refused (exit 2), never a bug.

The ranks of a torch program are threads of one process that share one
controlled process group. What starts other processes (torchelastic's own
launcher API; ``mp.spawn`` starts controlled ranks, see :mod:`.launcher`), or talks through a real store or RPC agent of its own,
would run beside the ranks, out of dnsse's sight; its hangs and values
would be nobody's verdict. DDP, FSDP, DeviceMesh and functional collectives
are not here: they reach the controlled group.
"""

from __future__ import annotations

from dnsse.engine.uncontrolled import Refusal

_SPAWN = (
    "dnsse runs FUNC(rank, world_size) once per rank itself, as threads of one process; point dnsse at the "
    "function the processes run (FILE.py:FUNC with --world-size N) instead of the code that spawns them"
)
_STORE = (
    "the controlled default group already has a store; a store of the program's own would block in C++ "
    "where dnsse cannot see it. Use the default group's collectives, or torch.distributed's *_object "
    "collectives to exchange Python values"
)
_RPC = (
    "RPC agents run their own threads and network; express the exchange with send/recv or collectives, "
    "which dnsse controls"
)

REFUSED = (
    Refusal("torch.distributed.launcher.api", "elastic_launch", "torch.distributed.elastic (elastic_launch)", _SPAWN),
    Refusal(
        "torch.distributed.elastic.multiprocessing", "start_processes",
        "torch.distributed.elastic.multiprocessing.start_processes", _SPAWN,
    ),
    Refusal("torch.distributed", "TCPStore", "torch.distributed.TCPStore", _STORE),
    Refusal("torch.distributed", "FileStore", "torch.distributed.FileStore", _STORE),
    *(
        Refusal("torch.distributed.rpc", name, f"torch.distributed.rpc.{name}", _RPC)
        for name in ("init_rpc", "rpc_sync", "rpc_async", "remote")
    ),
)
