"""Reads and writes of shared state as scheduling points, at the bytecode level.

Each controlled thread traces the frames of the program under test (never
library code, which runs at full speed) opcode by opcode, and yields to the
scheduler before the opcodes that touch state another thread can see:
attribute, subscript, global and closure-cell loads and stores, and method
lookups (a method call may mutate its receiver). So ``self.count += 1`` has a
point between its load and its store, and a lost update is a schedule away.

Every point multiplies the schedule space, so the plan leaves out what cannot
race: loads of globals that no function rebinds (functions, classes, modules,
constants set at import), attributes of modules, subscripts of immutable
values, lookups of methods written in Python (their bodies have their own
points, or their own locks), and loads of synchronization objects. The tests
on runtime values depend only on the program's state, so a schedule replays.

Objects are named by name (``attr:count``, ``global:total``, ``cell:items``,
``item`` for any subscript), not by identity, which a trace function cannot
see: two objects with an attribute of one name look dependent. That errs on
the side of exploring too much, except where a method is called on a receiver
whose name is unknown (a local alias), which only touches ``item``.

Needs CPython 3.11 (``f_lasti`` is a byte offset, opcode events fire at the
first ``EXTENDED_ARG`` of an instruction); on other versions fewer opcodes
are recognized, never wrongly.
"""

from __future__ import annotations

import contextlib
import dis
import os
import queue
import sys
import types
import weakref
from dataclasses import dataclass
from typing import Callable, Iterator

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.target import LoadedTarget
from dnsse.engine.operation import Access, Operation

_MISSING = object()

# opcode -> (operation kind, object prefix, access); a prefix of None names "item".
_SHARED_OPCODES: dict[str, tuple[str, str | None, Access]] = {
    "LOAD_ATTR": ("attr.load", "attr", Access.READ),
    "STORE_ATTR": ("attr.store", "attr", Access.WRITE),
    "DELETE_ATTR": ("attr.delete", "attr", Access.WRITE),
    "LOAD_METHOD": ("method.call", "attr", Access.WRITE),
    "BINARY_SUBSCR": ("item.load", None, Access.READ),
    "STORE_SUBSCR": ("item.store", None, Access.WRITE),
    "DELETE_SUBSCR": ("item.delete", None, Access.WRITE),
    "LOAD_GLOBAL": ("global.load", "global", Access.READ),
    "STORE_GLOBAL": ("global.store", "global", Access.WRITE),
    "DELETE_GLOBAL": ("global.delete", "global", Access.WRITE),
    "LOAD_DEREF": ("cell.load", "cell", Access.READ),
    "LOAD_CLASSDEREF": ("cell.load", "cell", Access.READ),
    "STORE_DEREF": ("cell.store", "cell", Access.WRITE),
    "DELETE_DEREF": ("cell.delete", "cell", Access.WRITE),
}

# Opcodes that push one named value with no side effect: a receiver we can look at.
_NAMED_LOADS = {"LOAD_FAST", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_CONST"}
_IMMUTABLE = (tuple, str, bytes, frozenset, range, int, float, complex, bool, type(None))


@dataclass(frozen=True, slots=True)
class _Point:
    operation: Operation
    # True when this occurrence touches nothing shared; None: always a point.
    skip: Callable[[types.FrameType], bool] | None


@dataclass(frozen=True, slots=True)
class _Instruction:
    event_offset: int  # where the opcode event fires: the first EXTENDED_ARG, if any
    opname: str
    argval: object
    line: int | None
    jump_target: bool


_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def plan_for(target: LoadedTarget) -> SharedStatePlan:
    """The plan of ``target``'s code, made once per loaded target (a campaign)."""
    plan = _plans.get(target)
    if plan is None:
        plan = _plans[target] = SharedStatePlan(target.code)
    return plan


class SharedStatePlan:
    """For every code object of the target module: byte offset -> scheduling point."""

    def __init__(self, module_code: types.CodeType) -> None:
        codes = list(_code_objects(module_code))
        listings = {code: _instructions(code) for code in codes}
        rebound = {
            ins.argval
            for listing in listings.values()
            for ins in listing
            if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL")
        }
        opaque = _opaque_types()
        # Keyed by id: hashing a code object hashes its bytecode, too slow for
        # every call; the plan keeps the code objects alive.
        self.tables: dict[int, dict[int, _Point]] = {}
        self._codes = codes
        for code, listing in listings.items():
            table = _table(code, listing, rebound, opaque)
            if table:
                self.tables[id(code)] = table


@contextlib.contextmanager
def traced(agent: ThreadAgent, plan: SharedStatePlan | None) -> Iterator[None]:
    """Trace the calling thread (the agent's own) while the block runs."""
    if plan is None:
        yield
        return
    tracer = _tracer(agent, plan)
    hook = agent.execution.trace_hook
    # The agent's thread may already carry the coverage tracer: keep it, chained.
    previous = sys.gettrace()
    sys.settrace(tracer if hook is None else hook(tracer))
    try:
        yield
    finally:
        sys.settrace(previous)


def _tracer(agent: ThreadAgent, plan: SharedStatePlan) -> Callable:
    tables = plan.tables
    yield_point = agent.execution.yield_point

    def trace_call(frame: types.FrameType, event: str, arg: object) -> Callable | None:
        table = tables.get(id(frame.f_code))
        if table is None:
            return None
        frame.f_trace_lines = False
        frame.f_trace_opcodes = True

        def trace_opcode(frame: types.FrameType, event: str, arg: object) -> Callable:
            if event == "opcode":
                point = table.get(frame.f_lasti)
                if point is not None and (point.skip is None or not point.skip(frame)):
                    yield_point(agent, point.operation)
            return trace_opcode

        return trace_opcode

    return trace_call


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_objects(constant)


def _instructions(code: types.CodeType) -> list[_Instruction]:
    listing = []
    prefix: int | None = None
    prefix_is_target = False
    line = None
    for ins in dis.get_instructions(code):
        if ins.positions is not None and ins.positions.lineno is not None:
            line = ins.positions.lineno
        if ins.opname == "EXTENDED_ARG":
            if prefix is None:
                prefix, prefix_is_target = ins.offset, ins.is_jump_target
            continue
        offset = ins.offset if prefix is None else prefix
        listing.append(_Instruction(offset, ins.opname, ins.argval, line, ins.is_jump_target or prefix_is_target))
        prefix, prefix_is_target = None, False
    return listing


def _table(
    code: types.CodeType,
    listing: list[_Instruction],
    rebound: set[object],
    opaque: tuple[type, ...],
) -> dict[int, _Point]:
    where = os.path.basename(code.co_filename)
    table = {}
    for index, ins in enumerate(listing):
        spec = _SHARED_OPCODES.get(ins.opname)
        if spec is None:
            continue
        kind, prefix, access = spec
        skip: Callable[[types.FrameType], bool] | None = None
        objects: tuple[tuple[str, Access], ...]
        if prefix is None:
            objects = (("item", access),)
            receiver = _receiver(listing, index, depth=2)
            if receiver is _CONSTANT:
                continue
            if receiver is not None:
                skip = _value_is(receiver, _IMMUTABLE)
        else:
            objects = ((f"{prefix}:{ins.argval}", access),)
        if ins.opname == "LOAD_GLOBAL":
            if ins.argval not in rebound:
                continue
            skip = _value_is(_name_fetcher("LOAD_GLOBAL", str(ins.argval)), opaque)
        elif ins.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
            skip = _value_is(_name_fetcher(ins.opname, str(ins.argval)), opaque)
        elif ins.opname == "LOAD_ATTR":
            receiver = _receiver(listing, index, depth=1)
            if receiver is _CONSTANT:
                continue
            if receiver is not None:
                skip = _attribute_is_unshared(receiver, str(ins.argval), opaque)
        elif ins.opname == "LOAD_METHOD":
            receiver = _receiver(listing, index, depth=1)
            if receiver is _CONSTANT:
                continue
            if receiver is not None:
                skip = _method_is_python(receiver, str(ins.argval))
            named = _object_name(listing[index - 1]) if index > 0 and not ins.jump_target else None
            objects = ((named, Access.WRITE), ("item", Access.WRITE)) if named else (("item", Access.WRITE),)
        table[ins.event_offset] = _Point(Operation(kind, objects, f"{where}:{ins.line}"), skip)
    return table


_CONSTANT: Callable[[types.FrameType], object] = lambda frame: _MISSING  # noqa: E731 - a sentinel


def _receiver(listing: list[_Instruction], index: int, depth: int) -> Callable[[types.FrameType], object] | None:
    """How to fetch the object an opcode acts on, when the bytecode says plainly.

    ``depth`` is 1 for ``obj.attr`` (the receiver is the previous instruction)
    and 2 for ``obj[key]`` (the key, pushed by one plain load, comes between).
    ``None`` when it is computed or control flow may join in between.
    """
    start = index - depth
    if start < 0 or any(listing[i].jump_target for i in range(start + 1, index + 1)):
        return None
    if depth == 2 and listing[index - 1].opname not in _NAMED_LOADS:
        return None
    source = listing[start]
    if source.opname == "LOAD_CONST":
        return _CONSTANT
    if source.opname in _NAMED_LOADS:
        return _name_fetcher(source.opname, str(source.argval))
    if source.opname == "LOAD_ATTR":
        inner = _receiver(listing, start, depth=1)
        if inner is None or inner is _CONSTANT:
            return None
        name = str(source.argval)
        return lambda frame: _instance_attribute(inner(frame), name)
    return None


def _name_fetcher(opname: str, name: str) -> Callable[[types.FrameType], object]:
    if opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLASSDEREF"):
        return lambda frame: frame.f_locals.get(name, _MISSING)
    if opname == "LOAD_GLOBAL":
        return lambda frame: frame.f_globals.get(name, frame.f_builtins.get(name, _MISSING))
    return lambda frame: frame.f_locals.get(name, frame.f_globals.get(name, frame.f_builtins.get(name, _MISSING)))


def _instance_attribute(value: object, name: str) -> object:
    """An attribute from the instance dict only: no property or ``__getattr__`` runs."""
    try:
        namespace = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return _MISSING
    if isinstance(value, types.ModuleType) or not isinstance(namespace, dict):
        return _MISSING
    return namespace.get(name, _MISSING)


def _class_attribute(value: object, name: str) -> object:
    for klass in type(value).__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _MISSING


def _value_is(fetch: Callable[[types.FrameType], object], kinds: tuple[type, ...]) -> Callable[[types.FrameType], bool]:
    return lambda frame: isinstance(fetch(frame), kinds)


def _attribute_is_unshared(
    fetch: Callable[[types.FrameType], object], name: str, opaque: tuple[type, ...]
) -> Callable[[types.FrameType], bool]:
    def skip(frame: types.FrameType) -> bool:
        value = fetch(frame)
        return isinstance(value, types.ModuleType) or isinstance(_instance_attribute(value, name), opaque)

    return skip


def _method_is_python(fetch: Callable[[types.FrameType], object], name: str) -> Callable[[types.FrameType], bool]:
    def skip(frame: types.FrameType) -> bool:
        value = fetch(frame)
        if value is _MISSING:
            return False
        if isinstance(value, types.ModuleType):
            return True
        return _instance_attribute(value, name) is _MISSING and isinstance(
            _class_attribute(value, name), types.FunctionType
        )

    return skip


def _object_name(ins: _Instruction) -> str | None:
    if ins.opname == "LOAD_ATTR":
        return f"attr:{ins.argval}"
    if ins.opname == "LOAD_GLOBAL":
        return f"global:{ins.argval}"
    if ins.opname in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
        return f"cell:{ins.argval}"
    return None


def _opaque_types() -> tuple[type, ...]:
    """Values whose loads race with nothing: code, modules and synchronization objects."""
    from dnsse.frameworks.threads.primitive import Primitive
    from dnsse.frameworks.threads.thread import Thread

    return (
        types.FunctionType,
        types.BuiltinFunctionType,
        types.MethodType,
        type,
        types.ModuleType,
        Primitive,
        Thread,
        queue.Queue,
    )
