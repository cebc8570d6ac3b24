"""The value stack of a running frame, read from a trace function (CPython 3.11).

Before each opcode a trace function sees the frame but not the operands the
opcode is about to take: the receiver of ``obj.attr``, the dict of
``key in d``, the callable and arguments of a call. CPython 3.11 stores the
stack pointer in the frame before it calls the trace function, so the
operands can be read from the frame's memory. That is what lets a step name
the very objects it touches instead of guessing them from the bytecode.

The layout is CPython 3.11's (``_PyInterpreterFrame`` in
``Include/internal/pycore_frame.h``); on any other interpreter
:data:`AVAILABLE` is false and nothing here is called.
"""

from __future__ import annotations

import ctypes
import sys
import types

AVAILABLE = sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11)

_POINTER = ctypes.sizeof(ctypes.c_void_p)
# PyFrameObject: ob_refcnt, ob_type, f_back, then f_frame.
_FRAME_DATA = 3 * _POINTER
# _PyInterpreterFrame: f_func, f_globals, f_builtins, f_locals, f_code,
# frame_obj, previous, prev_instr, then int stacktop, then localsplus.
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


def local_slot(frame: types.FrameType, index: int) -> object:
    """Slot ``index`` of the frame's locals, cells and free variables (a cell for ``LOAD_DEREF``)."""
    return _object_in(_stack_base(frame) + index * _POINTER)
