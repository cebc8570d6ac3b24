"""Values as they cross between Ray processes: a copy as serialization makes it.

Ray serializes every argument, return value and put value, so the receiver
gets a copy of its own: a task that mutates its argument, or a driver that
mutates what ``get`` returned, changes nobody else's copy. Here the copy is
``copy.deepcopy``'s, with the same sharing (an object twice in a value is
one object twice in the copy) and the same failures (what cannot be copied
cannot be pickled).

An execution copies a value at every submission, start, return and get,
and most values are numbers, strings, refs and small lists, tuples and
dicts of them; :func:`copy_value` copies those itself, the way
``copy.deepcopy`` does, and hands everything else to ``copy.deepcopy`` with
the same memo, so the copy is the one ``copy.deepcopy`` alone would make.
NumPy arrays in the copy are read-only, as Ray's zero-copy reads give them.
Handles (refs, actor handles, remote functions) are names: the copy is the
handle itself (see :func:`passed_by_name`).
"""

from __future__ import annotations

import copy
import sys
import types
from typing import Any, TypeVar

# Types deepcopy never copies (its atomic ones) and the handles registered by passed_by_name.
_AS_IS: set[type] = {
    type(None), bool, int, float, complex, str, bytes, range, type,
    types.FunctionType, types.BuiltinFunctionType,
}

Handle = TypeVar("Handle", bound=type)


def passed_by_name(cls: Handle) -> Handle:
    """Class decorator: an instance crosses processes as a name, so its deep copy is itself (Ray pickles a handle)."""
    cls.__deepcopy__ = _itself  # type: ignore[attr-defined]
    _AS_IS.add(cls)
    return cls


def _itself(self: Any, memo: dict) -> Any:
    return self


def copy_value(value: Any) -> Any:
    """A copy as serialization would make it; a value Ray could not send fails the same way."""
    cls = type(value)
    if cls in _AS_IS:
        return value
    if cls is dict and not value:
        return {}  # no keyword arguments: the commonest value of all
    if cls is tuple:
        for item in value:
            if type(item) not in _AS_IS:
                break
        else:
            return value  # positional arguments of plain values: their own copy
    memo: dict[int, Any] = {}
    try:
        copied = _copy(value, memo)
    except Exception as error:  # noqa: BLE001 - any failure to copy is a failure to serialize
        raise TypeError(
            f"Could not serialize {type(value).__name__} for Ray: {error}. Ray copies arguments, "
            "return values and put values between processes; pass data, not locks or open resources"
        ) from error
    numpy = sys.modules.get("numpy")
    if numpy is not None and memo:
        _freeze_arrays(memo, numpy.ndarray)
    return copied


def _freeze_arrays(memo: dict[int, Any], ndarray: type) -> None:
    """Make the copy's NumPy arrays read-only, as Ray's zero-copy deserialization gives them.

    Ray reads an array out of the object store's shared memory without copying
    it, so a task's array argument and the array ``ray.get`` returns cannot be
    written (``ValueError: assignment destination is read-only``), wherever the
    array sits in the value. An array of Python objects is pickled with the
    rest and stays writable. Every array the copy made is in deepcopy's memo.
    """
    for copied in memo.values():
        if isinstance(copied, ndarray) and not copied.dtype.hasobject:
            copied.flags.writeable = False


def _copy(value: Any, memo: dict[int, Any]) -> Any:
    """``copy.deepcopy(value, memo)``, made here for plain lists, tuples and dicts.

    The items that are their own copies are tested inline: a call per item would cost more than the copy.
    """
    cls = type(value)
    if cls in _AS_IS:
        return value
    if cls is not list and cls is not tuple and cls is not dict:
        return copy.deepcopy(value, memo)
    known = memo.get(id(value), memo)
    if known is not memo:
        return known  # met before in this value: its copy is shared, as deepcopy shares it
    as_is = _AS_IS
    if cls is tuple:
        for item in value:
            if type(item) not in as_is:
                return _copy_tuple(value, memo)
        return value  # deepcopy keeps a tuple whose items are their own copies, and does not memoize it
    if cls is list:
        copied: list = []
        memo[id(value)] = copied
        append = copied.append
        for item in value:
            append(item if type(item) in as_is else _copy(item, memo))
        return copied
    mapping: dict = {}
    memo[id(value)] = mapping
    for key, item in value.items():
        mapping[key if type(key) in as_is else _copy(key, memo)] = item if type(item) in as_is else _copy(item, memo)
    return mapping


def _copy_tuple(value: tuple, memo: dict[int, Any]) -> tuple:
    as_is = _AS_IS
    items = [item if type(item) in as_is else _copy(item, memo) for item in value]
    # A tuple that holds itself through a list was copied while its items were.
    known = memo.get(id(value), memo)
    if known is not memo:
        return known
    for new, old in zip(items, value):
        if new is not old:
            copied = memo[id(value)] = tuple(items)
            return copied
    return value  # its items are their own copies: deepcopy keeps it, and does not memoize it
