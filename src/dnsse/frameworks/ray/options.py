"""The options of ``@ray.remote`` and ``.options()``: which are known, and what they mean here.

Resource options (``num_cpus``, ``num_gpus``, ``resources``, ...) are
accepted and ignored: the controlled runtime does not model resource limits.
An unknown option is refused as Ray refuses it.
"""

from __future__ import annotations

from typing import Any

_COMMON = {
    "num_cpus", "num_gpus", "memory", "resources", "accelerator_type", "runtime_env",
    "scheduling_strategy", "label_selector", "name", "namespace", "_metadata", "enable_task_events",
    "object_store_memory", "placement_group", "placement_group_bundle_index",
    "placement_group_capture_child_tasks", "_labels", "fallback_strategy",
}
TASK_OPTIONS = _COMMON | {"num_returns", "max_retries", "retry_exceptions", "max_calls"}
ACTOR_OPTIONS = _COMMON | {
    "max_restarts", "max_task_retries", "max_concurrency", "lifetime", "get_if_exists",
    "allow_out_of_order_execution", "concurrency_groups", "max_pending_calls",
}
METHOD_OPTIONS = {"num_returns", "max_task_retries", "retry_exceptions", "concurrency_group", "name",
                  "enable_task_events", "_metadata", "tensor_transport"}


def checked(options: dict[str, Any], allowed: set[str], what: str) -> dict[str, Any]:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(
            f"Invalid option keyword {unknown[0]!r} for {what}. Valid ones are {', '.join(sorted(allowed))}"
        )
    return dict(options)


def retries(value: object, default: int = 0) -> int:
    """A retry count; -1 means retry forever."""
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < -1:
        raise ValueError(f"a retry count must be an int >= -1 (-1 retries forever), got {value!r}")
    return value


def count(value: object) -> int:
    """A count such as ``max_calls``: a non-negative int, 0 meaning no limit."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"max_calls must be a non-negative int (0: no limit), got {value!r}")
    return value


def num_returns(value: object) -> int:
    if value is None or value == "dynamic":
        return 1  # a "dynamic" call's one ref holds the refs of what it yielded (see .streaming)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"num_returns must be a non-negative int, got {value!r} (streaming is not supported)")
    return value


def may_retry(error: BaseException, retry_exceptions: object) -> bool:
    """Whether an application error is retried: ``retry_exceptions`` True or a list of classes."""
    if retry_exceptions is True:
        return isinstance(error, Exception)
    if isinstance(retry_exceptions, (list, tuple)):
        return isinstance(error, tuple(retry_exceptions))
    return False
