"""Which bytecode instructions of the program are scheduling points, and how each finds what it touches.

An instruction that may touch an object another thread can see (see
:mod:`shared_state` for the list and what is left out) gets a :class:`Point`:
its kind, its place in the source, and a handler that reads the operands
off the frame's stack (:mod:`frame_stack`) and asks the access model
(:mod:`accesses`) which shared objects they are. The tables are made once
per code object by :class:`shared_state.SharedStatePlan`.
"""

from __future__ import annotations

import dis
import os
import sys
import types
from dataclasses import dataclass
from typing import Callable, Iterator

from dnsse.engine.object_names import ObjectNames
from dnsse.engine.operation import Access
from dnsse.frameworks.threads.accesses import AccessModel, Touched
from dnsse.frameworks.threads.frame_stack import NULL, local_slot, peek, top_entries

Handler = Callable[[types.FrameType, ObjectNames], tuple[Touched, str | None]]
_INPLACE_FIRST = 13  # BINARY_OP's first in-place operator (NB_INPLACE_ADD)
# Where a call's callable sits: 3.13 pushes it below the self-or-NULL slot, 3.11 and 3.12 above it.
_SELF_BELOW_CALLABLE = sys.version_info >= (3, 13)
# Where an opcode event fires for an instruction with EXTENDED_ARG prefixes: 3.11 at the first
# prefix; 3.12's and 3.13's instrumentation at each prefix and at the instruction itself.
_EVENT_AT_PREFIX = sys.version_info < (3, 12)


# Instructions that take the truth of the value on top of the stack: 3.11's and 3.12's jumps and ``not``,
# 3.13's TO_BOOL (its jumps and ``not`` then see a bool).
_TRUTH_TESTS = frozenset((
    "UNARY_NOT", "TO_BOOL", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE",
    "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE", "JUMP_IF_TRUE_OR_POP",
    "JUMP_IF_FALSE_OR_POP",
))


@dataclass(frozen=True, slots=True)
class Point:
    """A scheduling point at one instruction: its kind, its place, and how it finds what it touches."""

    kind: str
    where: str
    handler: Handler


@dataclass(frozen=True, slots=True)
class Instruction:
    event_offset: int  # where the opcode event fires: the first EXTENDED_ARG, if any
    opname: str
    arg: int | None
    argval: object
    line: int | None


def code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from code_objects(constant)


def instructions(code: types.CodeType) -> list[Instruction]:
    listing: list[Instruction] = []
    prefix: int | None = None
    line = None
    for ins in dis.get_instructions(code):
        if ins.positions is not None and ins.positions.lineno is not None:
            line = ins.positions.lineno
        if ins.opname == "EXTENDED_ARG":
            if prefix is None:
                prefix = ins.offset
            continue
        offset = ins.offset if prefix is None or not _EVENT_AT_PREFIX else prefix
        listing.append(Instruction(offset, ins.opname, ins.arg, ins.argval, line))
        prefix = None
    return listing


def point_table(
    code: types.CodeType, listing: list[Instruction], model: AccessModel, rebound_globals: set[str]
) -> dict[int, Point]:
    """Byte offset -> the point there, for the instructions of ``code`` that may touch shared state."""
    where = os.path.basename(code.co_filename)
    table = {}
    for ins in listing:
        made = _handler(ins, model, rebound_globals)
        if made is not None:
            kind, handler = made
            table[ins.event_offset] = Point(kind, f"{where}:{ins.line}", handler)
    return table


def _handler(ins: Instruction, model: AccessModel, rebound_globals: set[str]) -> tuple[str, Handler] | None:
    """The kind of point an instruction is, and how to find what it touches; ``None``: never a point."""
    op, arg = ins.opname, ins.arg or 0
    nothing: tuple[Touched, None] = ((), None)

    def on_data(depth: int, access: Access) -> Handler:
        return lambda frame, names: (model.data([peek(frame, depth)], access, names), None)

    if op in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR"):
        name = str(ins.argval)
        access = Access.READ if op in ("LOAD_ATTR", "LOAD_METHOD") else Access.WRITE
        kind = {"LOAD_ATTR": "attr.load", "LOAD_METHOD": "attr.load"}.get(op, "attr.store")
        return kind, lambda frame, names: (model.attribute(peek(frame, 1), name, access, names), None)
    if op == "BINARY_SUBSCR":
        return "item.load", on_data(2, Access.READ)
    if op == "BINARY_SLICE":  # 3.12+: container, start, end
        return "item.load", on_data(3, Access.READ)
    if op == "STORE_SLICE":  # 3.12+: value, container, start, end
        return "item.store", on_data(3, Access.WRITE)
    if op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
        return "item.store", on_data(2, Access.WRITE)
    if op == "CONTAINS_OP":
        return "contains", on_data(1, Access.READ)
    if op in _TRUTH_TESTS:
        # ``if not self.items:``: a container's truth is its size, a read that races with an append.
        return "truth", on_data(1, Access.READ)
    if op in ("GET_ITER", "FOR_ITER"):
        return "iterate", on_data(1, Access.READ)
    if op in ("UNPACK_SEQUENCE", "UNPACK_EX"):
        return "unpack", on_data(1, Access.READ)
    if op in ("LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE"):
        return "merge", on_data(1, Access.READ)
    if op == "FORMAT_VALUE":
        return "format", on_data(2 if arg & 0x04 else 1, Access.READ)
    if op in ("CONVERT_VALUE", "FORMAT_SIMPLE"):  # 3.13's FORMAT_VALUE, in two
        return "format", on_data(1, Access.READ)
    if op == "FORMAT_WITH_SPEC":
        return "format", on_data(2, Access.READ)
    if op == "COMPARE_OP":
        return "compare", lambda frame, names: (model.data(top_entries(frame, 2), Access.READ, names), None)
    if op == "BINARY_OP":
        inplace = arg >= _INPLACE_FIRST

        def binary(frame: types.FrameType, names: ObjectNames) -> tuple[Touched, None]:
            left = model.data([peek(frame, 2)], Access.WRITE if inplace else Access.READ, names)
            return left + model.data([peek(frame, 1)], Access.READ, names), None

        return "binary", binary
    if op in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL"):
        name = str(ins.argval)
        if op == "LOAD_GLOBAL" and name not in rebound_globals:
            return None
        touched = ((f"global:{name}", Access.READ if op == "LOAD_GLOBAL" else Access.WRITE),)
        kind = "global.load" if op == "LOAD_GLOBAL" else "global.store"
        return kind, lambda frame, names: (touched, None)
    if op in ("LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF", "STORE_DEREF", "DELETE_DEREF"):
        access = Access.WRITE if op in ("STORE_DEREF", "DELETE_DEREF") else Access.READ

        def cell(frame: types.FrameType, names: ObjectNames) -> tuple[Touched, None]:
            holder = local_slot(frame, arg)
            if not isinstance(holder, types.CellType):
                return nothing
            if access is Access.READ:
                try:
                    if model.untracked(holder.cell_contents):
                        return nothing  # a function or a lock: what closures capture to call
                except ValueError:
                    pass  # an empty cell: reading it raises, still a read
            return ((names.name(holder), access),), None

        return ("cell.load" if access is Access.READ else "cell.store"), cell
    if op in ("CALL", "CALL_KW"):
        # CALL_KW (3.13) has the keyword names' tuple on top of the arguments.
        count = arg + (3 if op == "CALL_KW" else 2)
        first_is_callable = _SELF_BELOW_CALLABLE

        def call(frame: types.FrameType, names: ObjectNames) -> tuple[Touched, str | None]:
            entries = top_entries(frame, count)
            if first_is_callable:
                # 3.13: callable, self or NULL, arguments (then CALL_KW's keyword names, left out)
                if entries[1] is NULL:
                    return model.call(entries[0], entries[2:arg + 2], names)
                return model.call(entries[0], entries[1:arg + 2], names)
            # 3.11, 3.12: NULL, callable, arguments; or method, self, arguments
            if entries[0] is NULL:
                return model.call(entries[1], entries[2:], names)
            return model.call(entries[0], entries[1:], names)

        return "call", call
    if op == "CALL_FUNCTION_EX":
        # 3.13 keeps the callable below the NULL, 3.11 and 3.12 above it.
        below = 1 if _SELF_BELOW_CALLABLE else 0

        def call_ex(frame: types.FrameType, names: ObjectNames) -> tuple[Touched, str | None]:
            keywords = peek(frame, 1) if arg & 1 else None
            positional = peek(frame, 2 if arg & 1 else 1)
            function = peek(frame, (3 if arg & 1 else 2) + below)
            arguments = list(positional) if isinstance(positional, tuple) else [positional]
            if isinstance(keywords, dict):
                arguments.extend(keywords.values())
            return model.call(function, arguments, names)

        return "call", call_ex
    return None
