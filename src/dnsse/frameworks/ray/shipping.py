"""Functions and classes as a Ray worker receives them: with their own module globals.

Ray pickles a remote function or actor class of the user's script by value
the first time it is used (``f.remote()``, ``Cls.remote()``), together with
the module globals its code refers to; every worker unpickles its own copy.
A task that appends to a global list changes its worker's list, never the
driver's. So here:

- :func:`shipment_of` takes the snapshot at first use: every global that the
  code (and the script's functions it calls, transitively) refers to, copied
  as serialization copies it.
- :meth:`Shipment.fresh` gives one worker process its own copy of that
  snapshot: the script's functions rebound to a new globals dict, an actor
  class as a subclass whose methods see that dict. A process loads each
  function once and keeps it (see :mod:`.processes`).

Code of the target's file is shipped by value, and so are the class
attributes of an actor's class; modules, library code, other classes and
Ray's handles (remote functions, actor classes and handles, refs) are
shared by reference, as cloudpickle does for importable code. The other
modules of the program (files beside the target) are importable, so their
functions, classes and the modules themselves travel by name: each worker
process imports its own copy (the ``relocate`` of :meth:`Shipment.fresh`).
A global that cannot be copied fails the submission as Ray's pickling does.
"""

from __future__ import annotations

import copy
import dis
import types
from dataclasses import dataclass, field
from typing import Any, Callable

from dnsse.frameworks.ray.program import ProgramModules

_FUNCTION_WRAPPERS = (staticmethod, classmethod)
# Importable things travel as names. Ray's own handles (remote functions, actor
# classes and handles, refs) copy as themselves: see their ``__deepcopy__``.
_BY_REFERENCE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)


@dataclass
class Shipment:
    """A snapshot of one function or class and the globals its code refers to."""

    root: Any
    module_globals: dict
    source_files: frozenset[str]
    data: dict[str, Any] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)
    functions: dict[str, types.FunctionType] = field(default_factory=dict)
    # The program's other module that defines the root (``helper``): a worker imports it there, by name.
    home: str | None = None
    # Whether a worker process running it twice may show the second task what the first left:
    # copied state (mutable globals, closures, defaults), a global it assigns, another program module.
    keeps_state: bool = False

    def fresh(self, builtins: dict | None = None, relocate: Callable[[Any], Any] = lambda value: value) -> Any:
        """The root as one worker process sees it, with a private copy of its globals.

        ``builtins`` (with the process's ``__import__``) and ``relocate``
        give the process's own copies of the program's other modules.
        """
        if not self.module_globals:
            return self.root  # library code: shipped by reference
        namespace: dict[str, Any] = {
            "__builtins__": builtins if builtins is not None else self.module_globals.get("__builtins__", __builtins__),
            "__name__": self.module_globals.get("__name__"),
            "__file__": self.module_globals.get("__file__"),
        }
        namespace.update({name: relocate(value) for name, value in self.shared.items()})
        if self.data:
            namespace.update(copy.deepcopy(self.data))
        for name, function in self.functions.items():
            namespace[name] = _rebind(function, namespace)
        if isinstance(self.root, type):
            return _worker_class(self.root, namespace, self.source_files)
        return _rebind(self.root, namespace)


def shipment_of(root: Callable | type, source_files: frozenset[str], program: ProgramModules | None = None) -> Shipment:
    """Snapshot ``root`` (a function or class) and the globals its code refers to, now.

    ``program`` names the driver's copies of the program's other modules.
    """
    program = program or ProgramModules()
    functions = _script_functions_of(root, source_files)
    codes = [function.__code__ for function in functions]
    module_globals = functions[0].__globals__ if functions else None
    shipment = Shipment(root, module_globals if module_globals is not None else {}, source_files)
    if module_globals is None:
        return shipment
    if "<locals>" not in getattr(root, "__qualname__", "<locals>"):
        shipment.home = program.relative(module_globals.get("__name__"))
    seen: set[str] = set()
    pending = [name for code in codes for name in _names(code)]
    while pending:
        name = pending.pop()
        if name in seen or name not in module_globals:
            continue
        seen.add(name)
        value = module_globals[name]
        # A function of another file of the program (a module beside the target) keeps its own
        # module's globals: Ray pickles it by reference, as it does importable code.
        if (
            isinstance(value, types.FunctionType)
            and _is_script_function(value, source_files)
            and value.__globals__ is module_globals
        ):
            shipment.functions[name] = value
            pending.extend(_names(value.__code__))
        elif isinstance(value, _BY_REFERENCE):
            shipment.shared[name] = value
        else:
            shipment.data[name] = value
    try:
        original, shipment.data = shipment.data, copy.deepcopy(shipment.data) if shipment.data else {}
    except Exception as error:  # noqa: BLE001 - whatever fails to copy fails to pickle
        what = getattr(root, "__qualname__", repr(root))
        raise TypeError(
            f"Could not serialize {what} for Ray: a global it refers to cannot be copied to a worker ({error}). "
            "Ray ships a script's functions with copies of their globals; create locks, files and clients "
            "inside the task or actor instead"
        ) from None
    codes += [function.__code__ for function in shipment.functions.values()]
    shipment.keeps_state = shipment.home is not None or _keeps_state(
        root, shipment, original, codes, program
    )
    return shipment


def _keeps_state(root: Any, shipment: Shipment, original: dict, codes: list[types.CodeType],
                 program: ProgramModules) -> bool:
    """Whether two tasks of ``root`` on one worker process can tell that they share it."""
    # What a copy made anew (not an int, a str, a handle) is one object per process, which a task may change.
    if any(shipment.data[name] is not value for name, value in original.items()):
        return True
    functions = [root, *shipment.functions.values()] if isinstance(root, types.FunctionType) else []
    for function in functions:
        kept = [*(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()]
        for cell in function.__closure__ or ():
            try:
                kept.append(cell.cell_contents)
            except ValueError:
                continue
        try:
            if any(_by_value(value) is not value for value in kept):
                return True
        except Exception:  # noqa: BLE001 - it fails to ship anyway; it cannot be shown to keep nothing
            return True
    if any(program.relative(getattr(value, "__name__" if isinstance(value, types.ModuleType) else "__module__", None))
           for value in shipment.shared.values()):
        return True
    return any(_assigns_globals(code) or set(_imports(code)) & program.names for code in codes)


# id(code) -> (the code, kept alive so that its id is not reused; whether it assigns globals; what it imports).
# A shipment is made for every remote function and class in every execution: their code is read once.
_read: dict[int, tuple[types.CodeType, bool, list[str]]] = {}


def _assigns_globals(code: types.CodeType) -> bool:
    return _reading(code)[1]


def _imports(code: types.CodeType) -> list[str]:
    """The top-level names of the modules a code object (or code nested in it) imports."""
    return _reading(code)[2]


def _reading(code: types.CodeType) -> tuple[types.CodeType, bool, list[str]]:
    known = _read.get(id(code))
    if known is None:
        instructions = list(dis.get_instructions(code))
        inner = [c for c in code.co_consts if isinstance(c, types.CodeType)]
        assigns = any(i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") for i in instructions) or any(
            _assigns_globals(c) for c in inner
        )
        names = [str(i.argval).partition(".")[0] for i in instructions if i.opname == "IMPORT_NAME"]
        for constant in inner:
            names.extend(_imports(constant))
        known = _read[id(code)] = (code, assigns, names)
    return known


def _is_script_function(function: types.FunctionType, source_files: frozenset[str]) -> bool:
    return function.__code__.co_filename in source_files


def _script_functions_of_class(cls: type, source_files: frozenset[str]) -> list[types.FunctionType]:
    functions = []
    for klass in cls.__mro__:
        if klass is object:
            continue  # nothing of the script's there, and a class's longest dict
        for member in vars(klass).values():
            function = _unwrap(member)
            if isinstance(function, types.FunctionType) and _is_script_function(function, source_files):
                functions.append(function)
    return functions


def _script_functions_of(root: Any, source_files: frozenset[str]) -> list[types.FunctionType]:
    """The script's functions that make ``root``: a class's methods, or the function itself; none for library code."""
    if isinstance(root, type):
        return _script_functions_of_class(root, source_files)
    if isinstance(root, types.FunctionType) and _is_script_function(root, source_files):
        return [root]
    return []


def _names(code: types.CodeType) -> tuple[str, ...]:
    """Every name a code object (and the code nested in it) may look up as a global."""
    known = _named.get(id(code))
    if known is None:
        names = list(code.co_names)
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):
                names.extend(_names(constant))
        known = _named[id(code)] = (code, tuple(names))
    return known[1]


# id(code) -> (the code, kept alive so that its id is not reused; the names it may look up), read once as _read.
_named: dict[int, tuple[types.CodeType, tuple[str, ...]]] = {}


def _unwrap(member: Any) -> Any:
    if isinstance(member, _FUNCTION_WRAPPERS):
        return member.__func__
    return member


def _is_special(name: str, member: Any) -> bool:
    """Not plain class data: dunders, functions, descriptors and nested classes."""
    return (name.startswith("__") and name.endswith("__")) or callable(member) or hasattr(member, "__get__")


def _by_value(value: Any) -> Any:
    """``value`` as it reaches a worker: a module or importable code by name, the rest copied."""
    return value if isinstance(value, _BY_REFERENCE) else copy.deepcopy(value)


def _rebind(function: types.FunctionType, namespace: dict) -> types.FunctionType:
    closure = None
    if function.__closure__ is not None:
        # Closure values travel by value too, as cloudpickle sends them.
        contents = []
        for cell in function.__closure__:
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell (a name bound later)
                contents.append(types.CellType())
                continue
            # A module the enclosing function imported travels by name, as a global does.
            contents.append(types.CellType(_by_value(value)))
        closure = tuple(contents)
    # Defaults travel by value too: a mutable default is the process's own.
    defaults = tuple(map(_by_value, function.__defaults__)) if function.__defaults__ else function.__defaults__
    rebound = types.FunctionType(function.__code__, namespace, function.__name__, defaults, closure)
    if function.__kwdefaults__ is not None:
        rebound.__kwdefaults__ = {name: _by_value(value) for name, value in function.__kwdefaults__.items()}
    rebound.__qualname__ = function.__qualname__
    rebound.__module__ = function.__module__
    rebound.__doc__ = function.__doc__
    rebound.__dict__.update(function.__dict__)
    return rebound


def _worker_class(cls: type, namespace: dict, source_files: frozenset[str]) -> type:
    """A subclass of ``cls`` whose script methods see ``namespace``: the actor's own globals."""
    members: dict[str, Any] = {}
    for klass in reversed(cls.__mro__[:-1]):  # object, the last, has nothing of the script's
        for name, member in vars(klass).items():
            function = _unwrap(member)
            if isinstance(function, types.FunctionType) and _is_script_function(function, source_files):
                rebound = _rebind(function, namespace)
                members[name] = type(member)(rebound) if isinstance(member, _FUNCTION_WRAPPERS) else rebound
            elif isinstance(member, property):
                parts = [_rebind(f, namespace) if isinstance(f, types.FunctionType) and _is_script_function(f, source_files)
                         else f for f in (member.fget, member.fset, member.fdel)]
                members[name] = property(*parts, doc=member.__doc__)
            elif klass.__module__ == cls.__module__ and not _is_special(name, member):
                members[name] = copy.deepcopy(member)
    members["__module__"] = cls.__module__
    members["__qualname__"] = cls.__qualname__
    members["__doc__"] = cls.__doc__
    return type(cls)(cls.__name__, (cls,), members)
