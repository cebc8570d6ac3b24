"""``torchrun [OPTIONS] FILE.py ARGS``: how many ranks, and the environment each rank's process gets.

The options are read by torch's own parser (``torch.distributed.run``), so
every spelling torchrun takes (``--nproc-per-node``, ``--nproc_per_node``,
``--nproc-per-node=auto``, ...) means what it means there. The environment
of each worker is the one torch's elastic agent builds
(``LocalElasticAgent._start_workers`` in
``torch/distributed/elastic/agent/server/local_elastic_agent.py``), plus what
``torchrun`` itself puts in its own environment for the workers to inherit
(``OMP_NUM_THREADS``, ``TORCHELASTIC_SIGNALS_TO_HANDLE``).

``--nnodes M`` runs all M nodes' ranks here, node by node: node ``g``'s
local rank ``l`` is global rank ``g * N + l``, as torchrun's static and c10d
rendezvous number them. Options about restarts, monitoring, logs,
rendezvous servers and process start-up are accepted and change only the
environment variables that show them; what dnsse cannot do is refused.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Mapping, NoReturn

from dnsse.errors import BadInput
from dnsse.validation import MAX_WORLD_SIZE

# What the c10d rendezvous gives the workers as MASTER_PORT is a port it found free; any fixed
# number stands for it here (nothing listens: init_process_group binds to dnsse's group).
_DEFAULT_PORT = 29500


@dataclass(frozen=True)
class Torchrun:
    """The ranks torchrun starts and what each one's environment holds."""

    nnodes: int
    nproc_per_node: int
    role: str
    master_addr: str
    master_port: int
    run_id: str
    max_restarts: int
    use_agent_store: bool
    virtual_local_rank: bool
    signals_to_handle: str

    @property
    def world_size(self) -> int:
        return self.nnodes * self.nproc_per_node

    def environment(self, rank: int, base: Mapping[str, str], directory: str) -> dict[str, str]:
        """The environment of global rank ``rank``'s process; ``base`` is torchrun's own, ``directory`` its files'."""
        node, local_rank = divmod(rank, self.nproc_per_node)
        env = dict(base)
        if "OMP_NUM_THREADS" not in base and self.nproc_per_node > 1:
            env["OMP_NUM_THREADS"] = "1"
        env["TORCHELASTIC_SIGNALS_TO_HANDLE"] = self.signals_to_handle
        env.update(
            RANK=str(rank),
            GROUP_RANK=str(node),
            ROLE_RANK=str(rank),
            ROLE_NAME=self.role,
            LOCAL_WORLD_SIZE=str(self.nproc_per_node),
            WORLD_SIZE=str(self.world_size),
            GROUP_WORLD_SIZE=str(self.nnodes),
            ROLE_WORLD_SIZE=str(self.world_size),
            MASTER_ADDR=self.master_addr,
            MASTER_PORT=str(self.master_port),
            TORCHELASTIC_RESTART_COUNT="0",
            TORCHELASTIC_MAX_RESTARTS=str(self.max_restarts),
            TORCHELASTIC_RUN_ID=self.run_id,
            TORCHELASTIC_USE_AGENT_STORE=str(self.use_agent_store),
            TORCH_NCCL_ASYNC_ERROR_HANDLING=base.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
        )
        if self.virtual_local_rank:
            env["LOCAL_RANK"] = "0"
            visible = base.get("CUDA_VISIBLE_DEVICES")
            env["CUDA_VISIBLE_DEVICES"] = visible.split(",")[local_rank].strip() if visible else str(local_rank)
        else:
            env["LOCAL_RANK"] = str(local_rank)
        # Where torch.distributed.elastic's @record writes the error of a worker that raised.
        env["TORCHELASTIC_ERROR_FILE"] = os.path.join(
            directory, "torchelastic", self.run_id, "attempt_0", str(local_rank), "error.json"
        )
        return env


def parse_torchrun(arguments: list[str]) -> tuple[Torchrun, str, list[str], bool]:
    """torchrun's options, its script (or module), the script's arguments, and whether it is a module."""
    try:
        from torch.distributed import run
    except ImportError:
        raise BadInput("the command runs torchrun, but torch is not installed for the Python that runs dnsse") from None
    parser = run.get_args_parser()
    parser.prog = "torchrun"
    parser.error = _refuse_usage  # type: ignore[method-assign]
    parser.exit = _refuse_exit  # type: ignore[method-assign]
    args = parser.parse_args(arguments)
    if args.no_python:
        _refuse("--no-python", "dnsse runs Python programs; give torchrun the Python script")
    if getattr(args, "training_script", None) is None:
        raise BadInput("torchrun needs the training script after its options")
    min_nodes, max_nodes = run.parse_min_max_nnodes(args.nnodes)
    if min_nodes != max_nodes:
        _refuse(
            f"--nnodes {args.nnodes}",
            "an elastic range of nodes depends on which machines join; give a fixed number (--nnodes "
            f"{max_nodes}) and dnsse runs all of their ranks here",
        )
    if min_nodes < 1:
        raise BadInput(f"torchrun's --nnodes must be at least 1, got {args.nnodes}")
    try:
        nproc = run.determine_local_world_size(args.nproc_per_node)
    except ValueError as error:
        raise BadInput(f"torchrun's --nproc-per-node {args.nproc_per_node}: {error}") from None
    if args.max_restarts < 0:
        raise BadInput("torchrun's --max-restarts must be at least 0")
    if not 1 <= nproc * max_nodes <= MAX_WORLD_SIZE:
        raise BadInput(
            f"torchrun would start {nproc * max_nodes} ranks (--nnodes {max_nodes} × --nproc-per-node {nproc}); "
            f"dnsse runs 1 to {MAX_WORLD_SIZE}"
        )
    backend, endpoint, run_id = args.rdzv_backend, args.rdzv_endpoint, args.rdzv_id
    # As torch.distributed.run.run() decides: standalone, or one node with no static address given.
    if args.standalone or (backend == "static" and not endpoint and args.master_port is None and max_nodes == 1):
        backend, endpoint = "c10d", "localhost:0"
        # torchrun draws a fresh uuid4; one derived from the command keeps every execution alike.
        run_id = str(uuid.uuid5(uuid.NAMESPACE_URL, "torchrun " + " ".join(arguments)))
    if backend == "static":
        master_addr, port = args.master_addr, args.master_port or _DEFAULT_PORT
        use_agent_store = True
    else:
        host, _, given_port = endpoint.rpartition(":") if ":" in endpoint else (endpoint, "", "")
        master_addr = host or "localhost"
        port = args.master_port or (int(given_port) if given_port.isdigit() and int(given_port) else _DEFAULT_PORT)
        use_agent_store = not backend.startswith("etcd") and os.getenv("TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "0") != "1"
    torchrun = Torchrun(
        nnodes=max_nodes,
        nproc_per_node=nproc,
        role=args.role,
        master_addr=master_addr,
        master_port=port,
        run_id=run_id,
        max_restarts=args.max_restarts,
        use_agent_store=use_agent_store,
        virtual_local_rank=bool(getattr(args, "virtual_local_rank", False)),
        signals_to_handle=getattr(args, "signals_to_handle", "SIGTERM,SIGINT,SIGHUP,SIGQUIT"),
    )
    return torchrun, args.training_script, list(args.training_script_args), bool(args.module)


def _refuse(option: str, why: str) -> NoReturn:
    raise BadInput(f"torchrun's option {option} is not supported by dnsse: {why}")


def _refuse_usage(message: str) -> NoReturn:
    raise BadInput(f"torchrun: {message} (see `torchrun --help`)")


def _refuse_exit(status: int = 0, message: str | None = None) -> NoReturn:
    # torchrun --help inside the command: nothing to check.
    raise BadInput(f"torchrun would exit at once (status {status}){': ' + message if message else ''}")

