"""The session of the controlled Ray: ``ray.init``, ``ray.shutdown`` and ``ray.is_initialized``.

``ray.init`` declares the cluster's resources (``num_cpus``, ``num_gpus``,
``resources``: see :mod:`.resources`); there is no cluster to connect to,
the execution is the cluster.
"""

from __future__ import annotations

from typing import Any

from dnsse.frameworks.ray.runtime import current_runtime


class _InitInfo(dict):
    """What ``ray.init()`` returns; usable as a context manager that shuts down."""

    def __enter__(self) -> _InitInfo:
        return self

    def __exit__(self, *exc: object) -> None:
        shutdown()


def init(*args: Any, ignore_reinit_error: bool = False, **kwargs: Any) -> _InitInfo:
    runtime = current_runtime()
    if runtime is not None:
        if runtime.initialized and not ignore_reinit_error:
            raise RuntimeError(
                "Maybe you called ray.init twice by accident? This error can be suppressed by passing in "
                "'ignore_reinit_error=True' or by calling 'ray.shutdown()' prior to 'ray.init()'."
            )
        runtime.initialized = True
        runtime.cluster.declare(kwargs.get("num_cpus"), kwargs.get("num_gpus"), kwargs.get("resources"))
    return _InitInfo(address="dnsse-controlled", dashboard_url=None)


def shutdown(*args: Any, **kwargs: Any) -> None:
    runtime = current_runtime()
    if runtime is not None:
        runtime.initialized = False


def is_initialized() -> bool:
    runtime = current_runtime()
    return runtime is not None and runtime.initialized
