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


def _slot(frame: types.FrameType, index: int) -> object:
    data = ctypes.c_void_p.from_address(id(frame) + _FRAME_DATA).value
    address = ctypes.c_void_p.from_address(data + _LOCALS_PLUS + index * _POINTER).value  # type: ignore[operator]
    if not address:
        return NULL
    return ctypes.cast(address, ctypes.py_object).value


def _top(frame: types.FrameType) -> int:
    data = ctypes.c_void_p.from_address(id(frame) + _FRAME_DATA).value
    return ctypes.c_int.from_address(data + _STACK_TOP).value  # type: ignore[operator]


def peek(frame: types.FrameType, depth: int) -> object:
    """The stack entry ``depth`` places from the top (1: the top); :data:`NULL` for an empty slot."""
    return _slot(frame, _top(frame) - depth)


def local_slot(frame: types.FrameType, index: int) -> object:
    """Slot ``index`` of the frame's locals, cells and free variables (a cell for ``LOAD_DEREF``)."""
    return _slot(frame, index)
