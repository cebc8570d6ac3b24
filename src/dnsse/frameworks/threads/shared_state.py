"""Reads and writes of shared state as scheduling points, at the bytecode level.

Each controlled thread traces the frames of the program (its own files, not
the standard library, site-packages or dnsse) opcode by opcode. Before an
opcode that may touch an object another thread can see, the tracer reads
the opcode's operands off the frame's stack (:mod:`frame_stack`) and, when
one of them is shared data, yields to the scheduler with an operation that
names exactly what the opcode will touch (:mod:`accesses`). Every such
access is a scheduling point of its own, so a step touches at most one
piece of shared data, and what it announces is what it does.

The opcodes: attribute loads and stores, subscripts, ``in``, truth tests
(``if items:``, ``not items``), iteration
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
import os
import sys
import sysconfig
import types
import weakref
from typing import Callable, Iterator

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.operation import Operation
from dnsse.engine.target import LoadedTarget
from dnsse.frameworks.threads import frame_stack, monitored_points
from dnsse.frameworks.threads.accesses import AccessModel
from dnsse.frameworks.threads.opcode_points import Instruction, Point, code_objects, instructions, point_table

# 3.12 and 3.13 honour f_trace_opcodes set in a frame's call event only for the code's later frames
# (3.12.1 not even then); set again at a line event, it holds at once. 3.11 needs no line events.
_OPCODES_FROM_LINES = sys.version_info >= (3, 12)


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
        self.tables: dict[int, dict[int, Point] | None] = {}
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

    def table_for(self, code: types.CodeType) -> dict[int, Point] | None:
        key = id(code)
        if key not in self.tables:
            if not self.is_user_code(code):
                self.tables[key] = None
            else:
                self._learn_file(code.co_filename)
                self._learn(code)
        return self.tables.get(key)

    def _note_rebinding(self, code: types.CodeType, ins: Instruction) -> None:
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
        for inner in code_objects(code):
            for ins in instructions(inner):
                self._note_rebinding(inner, ins)

    def _learn_module(self, module: types.ModuleType) -> None:
        filename = getattr(module, "__file__", None)
        if isinstance(filename, str) and filename not in self._files_learnt and filename.endswith(".py"):
            if not os.path.abspath(filename).startswith(self._library):
                self._learn_file(filename)

    def _learn(self, module_code: types.CodeType) -> None:
        codes = [code for code in code_objects(module_code) if id(code) not in self.tables]
        listings = {code: instructions(code) for code in codes}
        for code, listing in listings.items():
            for ins in listing:
                self._note_rebinding(code, ins)
        for code, listing in listings.items():
            self._codes.append(code)
            self.tables[id(code)] = point_table(code, listing, self.model, self.rebound_globals)


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
