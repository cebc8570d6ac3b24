"""What the runner needs from a framework (torch, ray, threads)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ContextManager, Protocol

if TYPE_CHECKING:
    from dnsse.engine.bugs import Bug
    from dnsse.engine.execution import Execution
    from dnsse.engine.target import InputParameter, LoadedTarget


class Framework(Protocol):
    name: str
    # Whether its agents may share one OS thread as greenlets (dnsse.engine.greenlet_host):
    # only where all the per-thread state its programs rely on is swapped at each switch.
    agents_share_a_thread: bool

    def activate(self) -> ContextManager[None]:
        """Install the controlled APIs for a whole campaign (many executions)."""
        ...

    def inputs(self, target: LoadedTarget) -> list[InputParameter]:
        """The explored inputs of the entry point; raises BadInput when the signature is wrong."""
        ...

    def start(self, execution: Execution, target: LoadedTarget, inputs: dict[str, object]) -> None:
        """Create the first agents of an execution."""
        ...

    def finish(self, execution: Execution) -> Bug | None:
        """Checks at the end of a run that completed (e.g. collectives some rank never issued)."""
        ...


def _require_torch() -> None:
    """torch is an optional dependency (no CPU build is served for every Python): say so, not a traceback."""
    import sys

    try:
        import torch  # noqa: F401 - the framework imports it next anyway
    except ImportError:
        from dnsse.errors import BadInput

        version = ".".join(map(str, sys.version_info[:3]))
        raise BadInput(
            f"the program is a torch program, but torch is not installed for this Python ({version}, "
            f"{sys.executable}); install a CPU build of torch into it to check torch programs (threads, "
            "asyncio and Ray programs need no torch)"
        )


def framework_named(name: str, world_size: int, faults: bool = True) -> Framework:
    """The framework called ``name``; ``faults`` lets the ray framework inject the crashes Ray allows."""
    if name == "ray":
        # Every framework is built on this module; only the one a campaign names is loaded.
        from dnsse.frameworks.ray.framework import RayFramework

        return RayFramework(faults=faults)
    if name == "torch":
        _require_torch()
        # Every framework is built on this module; only the one a campaign names is loaded.
        from dnsse.frameworks.torch_dist.framework import TorchFramework

        return TorchFramework(world_size)
    if name == "threads":
        # Every framework is built on this module; only the one a campaign names is loaded.
        from dnsse.frameworks.threads.framework import ThreadsFramework

        return ThreadsFramework()
    from dnsse.errors import BadInput

    raise BadInput(f"the {name} framework is not supported yet; dnsse runs torch, ray and threads programs today")
