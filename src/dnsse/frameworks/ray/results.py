"""Putting what a task or call produced into its refs: values, errors, several returns."""

from __future__ import annotations

from typing import Any

from dnsse.engine.execution import format_user_traceback
from dnsse.frameworks.ray.errors import RayTaskError
from dnsse.frameworks.ray.refs import ObjectRef


def store_value(refs: list[ObjectRef], value: Any, what: str) -> None:
    """Fill ``refs`` with ``value``; a value that cannot be stored fails the task, as in Ray."""
    try:
        _fill(refs, value, what)
    except TypeError as error:
        store_error(refs, RayTaskError(what, f"TypeError: {error}", error))


def _fill(refs: list[ObjectRef], value: Any, what: str) -> None:
    if len(refs) == 1:
        refs[0].fill(value)
        return
    if len(refs) == 0:
        return
    if not isinstance(value, (tuple, list)) or len(value) != len(refs):
        error = ValueError(
            f"{what} declares num_returns={len(refs)} but returned {type(value).__name__} "
            f"{'of length ' + str(len(value)) if isinstance(value, (tuple, list)) else ''}".rstrip()
        )
        store_error(refs, RayTaskError(what, f"ValueError: {error}", error))
        return
    for ref, item in zip(refs, value):
        ref.fill(item)


def store_error(refs: list[ObjectRef], error: BaseException) -> None:
    for ref in refs:
        ref.fail(error)


def task_error(what: str, cause: BaseException, source_files: frozenset[str], where: str = "") -> RayTaskError:
    """The error stored for an application exception: the cause and its traceback in the worker ``where``."""
    if isinstance(cause, RayTaskError):
        # A nested task's error re-raised here keeps its first cause, as in Ray.
        here = format_user_traceback(cause, source_files)
        nested = f"{here}\n\nraised in {cause.origin()}:\n{cause.traceback_str}"
        return RayTaskError(what, nested, cause.cause, where)
    return RayTaskError(what, format_user_traceback(cause, source_files), cause, where)
