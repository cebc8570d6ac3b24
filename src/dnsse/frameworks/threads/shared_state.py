"""Reads and writes of shared state as scheduling points, at the bytecode level.

Each controlled thread traces the frames of the program (its own files, not
the standard library, site-packages or dnsse) opcode by opcode. Before an
opcode that may touch an object another thread can see, the tracer reads
the opcode's operands off the frame's stack (:mod:`frame_stack`) and, when
one of them is shared data, yields to the scheduler with an operation that
names exactly what the opcode will touch (:mod:`accesses`). Every such
access is a scheduling point of its own, so a step touches at most one
piece of shared data, and what it announces is what it does.

The opcodes: attribute loads and stores, subscripts, ``in``, iteration
(``GET_ITER``, ``FOR_ITER``), unpacking, comparisons and arithmetic on
containers, ``**``/``*`` merges, f-string formatting, global and cell loads
and stores, and calls into code that is not traced (builtins, C methods,
library functions), which touch their arguments.

Left out, because nothing can race on them: loads of globals that no
function rebinds and of attributes the program never rebinds after
construction, values that are immutable, code, modules, and controlled
primitives (they have points of their own).

The opcode events come from ``sys.settrace`` on CPython 3.11 and from
``sys.monitoring`` on 3.12 and 3.13 (:mod:`monitored_points`). The stack can
be read on those three; elsewhere nothing is traced and every execution says
that its steps' footprints were not seen.
"""

from __future__ import annotations

import contextlib
import dis
import os
import sys
import sysconfig
import types
import weakref
from dataclasses import dataclass
from typing import Callable, Iterator

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.object_names import ObjectNames
from dnsse.engine.operation import Access, Operation
from dnsse.engine.target import LoadedTarget
from dnsse.frameworks.threads import frame_stack, monitored_points
from dnsse.frameworks.threads.accesses import AccessModel, Touched
from dnsse.frameworks.threads.frame_stack import NULL, local_slot, peek, top_entries

Handler = Callable[[types.FrameType, ObjectNames], tuple[Touched, str | None]]
_INPLACE_FIRST = 13  # BINARY_OP's first in-place operator (NB_INPLACE_ADD)
# Where a call's callable sits: 3.13 pushes it below the self-or-NULL slot, 3.11 and 3.12 above it.
_SELF_BELOW_CALLABLE = sys.version_info >= (3, 13)
# Where an opcode event fires for an instruction with EXTENDED_ARG prefixes: 3.11 at the first
# prefix; 3.12's and 3.13's instrumentation at each prefix and at the instruction itself.
_EVENT_AT_PREFIX = sys.version_info < (3, 12)
# 3.12 and 3.13 honour f_trace_opcodes set in a frame's call event only for the code's later frames
# (3.12.1 not even then); set again at a line event, it holds at once. 3.11 needs no line events.
_OPCODES_FROM_LINES = sys.version_info >= (3, 12)


@dataclass(frozen=True, slots=True)
class _Point:
    kind: str
    where: str
    handler: Handler


_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_UNPLANNED = object()


def plan_for(target: LoadedTarget) -> SharedStatePlan:
    """The plan of ``target``'s code, made once per loaded target (a campaign)."""
    plan = _plans.get(target)
    if plan is None:
        plan = _plans[target] = SharedStatePlan(target.code, target.siblings.files)
    return plan


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    roots.add(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # dnsse itself
    return tuple(os.path.join(root, "") for root in roots)


class SharedStatePlan:
    """For every code object of the program: byte offset -> scheduling point.

    The target module's code is planned up front; code of the program's other
    files (a sibling module it imports) when it first runs. What every file of
    the program rebinds is learnt from its whole source before any of its code
    is planned, so no execution's points depend on what ran before it.
    """

    def __init__(self, module_code: types.CodeType, sibling_files: frozenset[str] = frozenset()) -> None:
        self._library = _library_roots()
        self._user_files: dict[str, bool] = {}
        self.rebound_globals: set[str] = set()
        self.mutated_attributes: set[str] = set()
        self.model = AccessModel(self.is_user_code, self.mutated_attributes, self._learn_module)
        # Files of the program whose whole source has been learnt (see _learn_file).
        self._files_learnt: set[str] = set()
        # Keyed by id: hashing a code object hashes its bytecode, too slow for
        # every call; the plan keeps the code objects alive.
        self.tables: dict[int, dict[int, _Point] | None] = {}
        self._codes: list[types.CodeType] = []
        # What the program's own files rebind is known before any table is made from it.
        self._files_learnt.add(module_code.co_filename)
        for filename in sorted(sibling_files):
            self._learn_file(filename)
        self._learn(module_code)

    def is_user_code(self, code: types.CodeType) -> bool:
        filename = code.co_filename
        known = self._user_files.get(filename)
        if known is None:
            # "<string>" and the like: code that libraries generate (dataclasses, namedtuple).
            known = not filename.startswith("<") and not os.path.abspath(filename).startswith(self._library)
            self._user_files[filename] = known
        return known

    def table_for(self, code: types.CodeType) -> dict[int, _Point] | None:
        key = id(code)
        if key not in self.tables:
            if not self.is_user_code(code):
                self.tables[key] = None
            else:
                self._learn_file(code.co_filename)
                self._learn(code)
        return self.tables.get(key)

    def _note_rebinding(self, code: types.CodeType, ins: _Instruction) -> None:
        if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            self.rebound_globals.add(str(ins.argval))
        elif ins.opname in ("STORE_ATTR", "DELETE_ATTR") and code.co_name != "__init__":
            self.mutated_attributes.add(str(ins.argval))
        elif ins.opname == "LOAD_CONST" and isinstance(ins.argval, str) and ins.argval.isidentifier():
            self.mutated_attributes.add(ins.argval)  # setattr(obj, "name", ...)

    def _learn_file(self, filename: str) -> None:
        """Learn what the whole file rebinds, the first time any of its code is seen.

        A module's top-level code runs once per process, so the names it
        binds would otherwise be learnt only by the first execution that
        imports it; and a function's stores only once it first ran. Learnt
        up front, the scheduling points of every execution are the same
        whatever ran before it in the process.
        """
        if filename in self._files_learnt:
            return
        self._files_learnt.add(filename)
        try:
            with open(filename, "rb") as source:
                code = compile(source.read(), filename, "exec")
        except (OSError, SyntaxError, ValueError):
            return  # no source to read: its code is learnt as it runs
        for inner in _code_objects(code):
            for ins in _instructions(inner):
                self._note_rebinding(inner, ins)

    def _learn_module(self, module: types.ModuleType) -> None:
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str) and filename not in self._files_learnt and filename.endswith(".py"):
            if not os.path.abspath(filename).startswith(self._library):
                self._learn_file(filename)

    def _learn(self, module_code: types.CodeType) -> None:
        codes = [code for code in _code_objects(module_code) if id(code) not in self.tables]
        listings = {code: _instructions(code) for code in codes}
        for code, listing in listings.items():
            for ins in listing:
                self._note_rebinding(code, ins)
        for code, listing in listings.items():
            self._codes.append(code)
            self.tables[id(code)] = _table(code, listing, self)


@contextlib.contextmanager
def traced(agent: ThreadAgent, plan: SharedStatePlan | None) -> Iterator[None]:
    """Trace the calling thread (the agent's own) while the block runs."""
    if plan is None:
        yield
        return
    if not frame_stack.AVAILABLE:
        version = ".".join(map(str, sys.version_info[:2]))
        agent.execution.distrust(
            f"Python {version} does not let dnsse read what an opcode touches (CPython 3.11 to 3.13 do), so reads and "
            "writes of shared Python objects are not scheduling points"
        )
        yield
        return
    if monitored_points.available():
        with monitored_points.traced(agent, plan):
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


def call_from_outside(agent: ThreadAgent, plan: SharedStatePlan | None, function: object, arguments: list) -> None:
    """A call that dnsse makes for the program (a thread's target): a point when it touches data.

    Calls from the program's own frames are seen by the tracer; this one is
    made from dnsse's code, so it is announced here, by the same rules.
    """
    if plan is None or not frame_stack.AVAILABLE:
        return
    execution = agent.execution
    touched, unseen = plan.model.call(function, arguments, execution.object_names)
    where = getattr(function, "__qualname__", repr(function))
    if unseen is not None:
        execution.distrust(f"the start of a thread running {where}: {unseen}")
    if touched:
        execution.yield_point(agent, Operation("call", touched, where))


def _tracer(agent: ThreadAgent, plan: SharedStatePlan) -> Callable:
    execution = agent.execution
    yield_point = execution.yield_point
    names = execution.object_names
    tables = plan.tables

    # Called for every call in the agent's thread, dnsse's own included: the common answers come first.
    def trace_call(frame: types.FrameType, event: str, arg: object) -> Callable | None:
        if execution.scheduling:
            return None
        code = frame.f_code
        table = tables.get(id(code), _UNPLANNED)
        if table is _UNPLANNED:
            table = plan.table_for(code)
        if not table:
            return None
        frame.f_trace_lines = _OPCODES_FROM_LINES
        frame.f_trace_opcodes = True
        points = table.get

        def trace_opcode(frame: types.FrameType, event: str, arg: object) -> Callable:
            # Most opcodes are no point: look the offset up before anything else.
            point = points(frame.f_lasti)
            if point is not None and event == "opcode":
                touched, unseen = point.handler(frame, names)
                if unseen is not None:
                    execution.distrust(f"{point.where}: {unseen}")
                if touched:
                    yield_point(agent, Operation(point.kind, touched, point.where))
            elif event == "line":
                frame.f_trace_opcodes = True
            return trace_opcode

        return trace_opcode

    return trace_call


# ---------------------------------------------------------------- the plan
@dataclass(frozen=True, slots=True)
class _Instruction:
    event_offset: int  # where the opcode event fires: the first EXTENDED_ARG, if any
    opname: str
    arg: int | None
    argval: object
    line: int | None


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_objects(constant)


def _instructions(code: types.CodeType) -> list[_Instruction]:
    listing = []
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
        listing.append(_Instruction(offset, ins.opname, ins.arg, ins.argval, line))
        prefix = None
    return listing


def _table(code: types.CodeType, listing: list[_Instruction], plan: SharedStatePlan) -> dict[int, _Point]:
    where = os.path.basename(code.co_filename)
    table = {}
    for ins in listing:
        made = _handler(ins, plan)
        if made is not None:
            kind, handler = made
            table[ins.event_offset] = _Point(kind, f"{where}:{ins.line}", handler)
    return table


def _handler(ins: _Instruction, plan: SharedStatePlan) -> tuple[str, Handler] | None:
    """The kind of point an instruction is, and how to find what it touches; ``None``: never a point."""
    model = plan.model
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
        if op == "LOAD_GLOBAL" and name not in plan.rebound_globals:
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
