"""The value stack of a running frame, read from a trace function (CPython 3.11 to 3.13).

Before each opcode a trace function sees the frame but not the operands the
opcode is about to take: the receiver of ``obj.attr``, the dict of
``key in d``, the callable and arguments of a call. CPython 3.11 stores the
stack pointer in the frame before it calls the trace function, so the
operands can be read from the frame's memory. That is what lets a step name
the very objects it touches instead of guessing them from the bytecode.

The layout is CPython's ``_PyInterpreterFrame`` (``Include/internal/pycore_frame.h``),
the same size up to the stack in 3.11, 3.12 and 3.13. 3.12 and 3.13 leave
the stored stack pointer stale while a callback runs, so there the depth
comes from the bytecode (:mod:`stack_depth`). On any other interpreter
:data:`AVAILABLE` is false and nothing here is called.
"""

from __future__ import annotations

import ctypes
import sys
import types

from dnsse.frameworks.threads.stack_depth import locals_count, stack_depths

AVAILABLE = sys.implementation.name == "cpython" and (3, 11) <= sys.version_info[:2] <= (3, 13)

_POINTER = ctypes.sizeof(ctypes.c_void_p)
# PyFrameObject: ob_refcnt, ob_type, f_back, then f_frame.
_FRAME_DATA = 3 * _POINTER
# _PyInterpreterFrame: seven pointers (3.11: f_func, f_globals, f_builtins,
# f_locals, f_code, frame_obj, previous; 3.12 and 3.13 reorder them), the
# instruction pointer, then int stacktop, then localsplus.
_STACK_TOP = 8 * _POINTER
_LOCALS_PLUS = 9 * _POINTER

NULL = object()
"""Stands for a NULL stack slot (3.11 pushes one before a plain call)."""


# Bound once: each read makes one small ctypes object over the frame's memory.
_pointer_at = ctypes.c_void_p.from_address
_int_at = ctypes.c_int.from_address
# A py_object read straight from a slot takes a new reference to what it holds
# (no cast through an integer), and raises ValueError for a NULL slot.
_object_at = ctypes.py_object.from_address


def _stack_base(frame: types.FrameType) -> int:
    """The address of the frame's first locals-and-stack slot."""
    return _pointer_at(id(frame) + _FRAME_DATA).value + _LOCALS_PLUS  # type: ignore[operator]


def _object_in(address: int) -> object:
    try:
        return _object_at(address).value
    except ValueError:  # an empty (NULL) slot
        return NULL


def peek(frame: types.FrameType, depth: int) -> object:
    """The stack entry ``depth`` places from the top (1: the top); :data:`NULL` for an empty slot."""
    data = _pointer_at(id(frame) + _FRAME_DATA).value
    top = _int_at(data + _STACK_TOP).value  # type: ignore[operator]
    return _object_in(data + _LOCALS_PLUS + (top - depth) * _POINTER)  # type: ignore[operator]


def top_entries(frame: types.FrameType, count: int) -> list[object]:
    """The ``count`` entries on top of the stack, the deepest first (a call's callable, then its arguments)."""
    data = _pointer_at(id(frame) + _FRAME_DATA).value
    top = _int_at(data + _STACK_TOP).value  # type: ignore[operator]
    first = data + _LOCALS_PLUS + (top - count) * _POINTER  # type: ignore[operator]
    # Only the deepest may be NULL (a call's, for a plain function call): the rest are read directly.
    entries = [_object_at(first).value if _pointer_at(first).value else NULL]
    for address in range(first + _POINTER, first + count * _POINTER, _POINTER):
        entries.append(_object_at(address).value)
    return entries


# On 3.12 and 3.13: id(code) -> (the code, kept alive so its id stays its own; slots before the stack; depths).
_layouts: dict[int, tuple[types.CodeType, int, dict[int, int]]] = {}


def _computed_top(frame: types.FrameType) -> int:
    """The stack's top as a slot index, from the depth the bytecode has at the frame's instruction."""
    code = frame.f_code
    layout = _layouts.get(id(code))
    if layout is None:
        layout = _layouts[id(code)] = (code, locals_count(code), stack_depths(code))
    return layout[1] + layout[2][frame.f_lasti]


if sys.version_info[:2] != (3, 11):

    def peek(frame: types.FrameType, depth: int) -> object:  # noqa: F811 - 3.12+'s, without a stored top
        """The stack entry ``depth`` places from the top (1: the top); :data:`NULL` for an empty slot."""
        return _object_in(_stack_base(frame) + (_computed_top(frame) - depth) * _POINTER)

    def top_entries(frame: types.FrameType, count: int) -> list[object]:  # noqa: F811
        """The ``count`` entries on top of the stack, the deepest first (a call's callable, then its arguments)."""
        first = _stack_base(frame) + (_computed_top(frame) - count) * _POINTER
        return [_object_in(address) for address in range(first, first + count * _POINTER, _POINTER)]


def local_slot(frame: types.FrameType, index: int) -> object:
    """Slot ``index`` of the frame's locals, cells and free variables (a cell for ``LOAD_DEREF``)."""
    return _object_in(_stack_base(frame) + index * _POINTER)
