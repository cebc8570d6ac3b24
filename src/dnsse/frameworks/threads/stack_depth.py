"""How deep the value stack is before each instruction of a code object (CPython 3.12 and 3.13).

CPython 3.11 stores a frame's stack pointer in the frame before it calls a
trace function, so :mod:`frame_stack` reads it there. 3.12 and 3.13 do not:
during a trace or ``sys.monitoring`` callback the stored pointer is stale.
The compiler guarantees that the stack has the same depth at an instruction
on every path that reaches it, so that depth is computed here once per code
object, by following the bytecode's control flow with ``dis.stack_effect``
(the function the compiler itself uses) from the first instruction and from
every exception handler's entry (its depth is in the exception table).
"""

from __future__ import annotations

import dis
import types

_NO_FALLTHROUGH = frozenset(
    dis.opmap[name]
    for name in (
        "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
        "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE",
    )
    if name in dis.opmap
)
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
_RETURN_GENERATOR = dis.opmap["RETURN_GENERATOR"]


class InconsistentDepth(Exception):
    """Two paths reach one instruction with different depths: the bytecode is not what this module expects."""


def stack_depths(code: types.CodeType) -> dict[int, int]:
    """Byte offset of each reachable instruction -> stack entries above the frame's locals before it runs."""
    listing = [ins for ins in dis.get_instructions(code) if ins.opcode != _EXTENDED_ARG]
    index = {ins.offset: position for position, ins in enumerate(listing)}
    depths: dict[int, int] = {}
    pending: list[tuple[int, int]] = [(0, 0)] if listing else []
    for entry in dis._parse_exception_table(code):  # type: ignore[attr-defined]
        # The handler runs with the entry's depth, the offset of the raising instruction if lasti, and the exception.
        pending.append((index[entry.target], entry.depth + (1 if entry.lasti else 0) + 1))
    while pending:
        position, depth = pending.pop()
        while position < len(listing):
            ins = listing[position]
            known = depths.get(ins.offset)
            if known is not None:
                if known != depth:
                    raise InconsistentDepth(f"{code.co_qualname} offset {ins.offset}: depth {known} and {depth}")
                break
            depths[ins.offset] = depth
            arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
            if ins.opcode in _JUMPS and isinstance(ins.argval, int) and ins.argval in index:
                pending.append((index[ins.argval], depth + dis.stack_effect(ins.opcode, arg, jump=True)))
            if ins.opcode in _NO_FALLTHROUGH:
                break
            depth += _effect(ins.opcode, arg)
            position += 1
    return depths


def _effect(opcode: int, arg: int | None) -> int:
    if opcode == _RETURN_GENERATOR:
        # The generator's first resumption pushes the value sent (None), which the next POP_TOP drops;
        # 3.12's stack_effect says 0 here (its compiler special-cases the opcode), 3.13's says 1.
        return 1
    return dis.stack_effect(opcode, arg, jump=False)


def locals_count(code: types.CodeType) -> int:
    """How many slots the frame's locals, cells and free variables take before its stack begins."""
    # A cell for an argument shares the argument's slot; other cells and the free variables follow the locals.
    return code.co_nlocals + len(set(code.co_cellvars) - set(code.co_varnames)) + len(code.co_freevars)
