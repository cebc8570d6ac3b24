"""What an opcode touches, from the values it is about to take.

Given the operands of an opcode (read off the frame's stack), these functions
say which objects it reads or writes, named by identity
(:class:`~dnsse.engine.object_names.ObjectNames`): ``o3`` for a dict or list
as a whole, ``o3.count`` for one attribute of an instance. Values that no
step can race on are left out: immutable values, code, modules' functions,
controlled primitives (they are scheduling points of their own) and objects
of the program's own classes where a Python method of the program does the
work (its body is traced).

A call into code that is not traced (a builtin, a C method, a library
function) touches each argument it takes, seen through iterators and views
(``sorted(d.items())`` reads ``d``): as a read for the builtins and methods
known to only read, as a write for everything else.
"""

from __future__ import annotations

import builtins
import collections
import gc
import types
from typing import Callable, Iterable

from dnsse.engine.object_names import ObjectNames, attribute_name
from dnsse.engine.operation import Access

Touched = tuple[tuple[str, Access], ...]

_IMMUTABLE = (int, float, complex, bool, str, bytes, tuple, frozenset, range, slice, type(None), type(...)) + (
    # A range's iterator holds no shared data, and its next() is one atomic step of CPython: two threads that
    # share one cannot race on it, so iterating a range touches nothing (for i in range(n) is no point).
    type(iter(range(0))),
    type(iter(range(2**64))),
)
_CODE = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.ClassMethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    types.CodeType,
    types.ModuleType,
    type,
    property,
    staticmethod,
    classmethod,
)
# Builtin containers that a subclass of the program's may extend: still data.
_DATA = (dict, list, set, bytearray, collections.deque)

# Objects that stand for a container they were made from: iterators and views.
_SEE_THROUGH = tuple(
    type(value)
    for value in (
        iter({}),
        iter({}.values()),
        iter({}.items()),
        {}.keys(),
        {}.values(),
        {}.items(),
        iter([]),
        reversed([]),
        iter(set()),
        iter(()),
        enumerate([]),
        zip(),
        map(len, []),
        filter(None, []),
        iter(collections.deque()),
        reversed(collections.deque()),
    )
) + (types.MappingProxyType,)

# Builtins that read their arguments and change nothing.
_READING_BUILTINS = frozenset(
    getattr(builtins, name)
    for name in (
        "len sorted list tuple set frozenset dict iter next sum min max any all str repr format hash bool "
        "int float enumerate zip reversed print map filter abs round divmod bytes ascii"
    ).split()
)
# Builtins that touch no state at all.
_PURE_BUILTINS = frozenset((id, type, isinstance, issubclass, callable))
# Methods of builtin containers that only read their receiver.
_READING_METHODS = frozenset(
    f"{kind.__name__}.{name}"
    for kind, names in (
        (dict, "get keys values items copy __contains__ __getitem__ __len__ __iter__"),
        (list, "index count copy __contains__ __getitem__ __len__ __iter__"),
        (set, "issubset issuperset isdisjoint union intersection difference symmetric_difference copy "
              "__contains__ __len__ __iter__"),
        (collections.deque, "index count copy __contains__ __getitem__ __len__ __iter__"),
    )
    for name in names.split()
)


class AccessModel:
    """Decides what operands touch, for the program whose code is traced.

    ``is_user_code`` says whether a code object is the program's (traced);
    ``mutated`` is the set of attribute names the program may rebind after
    construction (stored outside ``__init__``, or spelled as a string, for
    ``setattr``). A load of an attribute that is never rebound cannot race
    with a store, so it is not a scheduling point.
    """

    def __init__(
        self,
        is_user_code: Callable[[types.CodeType], bool],
        mutated: set[str],
        learn_module: Callable[[types.ModuleType], None] = lambda module: None,
    ) -> None:
        self.is_user_code = is_user_code
        self.mutated = mutated
        # Makes sure ``mutated`` knows what a module of the program's code may rebind,
        # even when the module was imported before this plan existed.
        self.learn_module = learn_module

    # ------------------------------------------------------------ values
    def untracked(self, value: object) -> bool:
        """Values no step can race on: immutable values, code, controlled primitives."""
        return isinstance(value, _IMMUTABLE) or isinstance(value, _CODE) or _controlled(value)

    def user_instance(self, value: object) -> bool:
        """An object of one of the program's classes (not a builtin container's subclass)."""
        if isinstance(value, _DATA):
            return False
        init = getattr(type(value), "__init__", None)
        code = getattr(init, "__code__", None)
        if code is not None and self.is_user_code(code):
            return True
        return any(
            isinstance(member, types.FunctionType) and self.is_user_code(member.__code__)
            for member in vars(type(value)).values()
        )

    def see_through(self, value: object, depth: int = 3) -> list[object]:
        """The containers behind an iterator or a view; the value itself otherwise."""
        if isinstance(value, _SEE_THROUGH) and depth > 0:
            found: list[object] = []
            for inner in gc.get_referents(value):
                found.extend(self.see_through(inner, depth - 1))
            return found
        return [] if self.untracked(value) else [value]

    # ------------------------------------------------------------ operands
    def data(self, values: Iterable[object], access: Access, names: ObjectNames) -> Touched:
        """Reads or writes of whole objects (a dict by ``in``, a list by iteration)."""
        touched = []
        for value in values:
            for target in self.see_through(value):
                if self.user_instance(target):
                    continue  # its dunder methods are the program's own, and traced
                touched.append((names.name(target), access))
        return tuple(touched)

    def attribute(self, owner: object, name: str, access: Access, names: ObjectNames) -> Touched:
        """``owner.name`` loaded (READ) or stored (WRITE)."""
        if isinstance(owner, types.ModuleType):
            self.learn_module(owner)
            if access is Access.READ and name not in self.mutated:
                return ()
            return ((f"module:{owner.__name__}.{name}", access),)
        if isinstance(owner, _IMMUTABLE) or _controlled(owner):
            return ()
        if isinstance(owner, _CODE) and not isinstance(owner, type):
            return ()
        if access is Access.READ and name not in self.mutated:
            return ()  # bound before the object was shared, and never rebound
        whole = names.name(owner)
        # Every attribute access also reads the object as a whole, so that a
        # call that may change any attribute (a write of ``o3``) depends on it.
        return ((attribute_name(whole, name), access), (whole, Access.READ))

    def call(self, function: object, arguments: list[object], names: ObjectNames) -> tuple[Touched, str | None]:
        """What a call touches when its body is not traced; with a reason when that may not be all."""
        if isinstance(function, types.FunctionType) and self.is_user_code(function.__code__):
            return (), None
        if isinstance(function, type) and self.user_instance_type(function):
            return (), None
        module = getattr(function, "__module__", None) or ""
        if module.startswith("dnsse") or _one_of(function, _PURE_BUILTINS):
            return (), None
        if isinstance(function, types.BuiltinMethodType) and getattr(function, "__self__", None) is not None:
            owner = function.__self__
            if not isinstance(owner, types.ModuleType):
                arguments = [owner, *arguments]
                function = getattr(type(owner), function.__name__, function)
        if function in (setattr, delattr, getattr, hasattr) and len(arguments) >= 2:
            owner, name = arguments[0], arguments[1]
            if not isinstance(name, str):
                return self.data([owner], Access.WRITE, names), None
            access = Access.WRITE if function in (setattr, delattr) else Access.READ
            return self.attribute(owner, name, access, names), None
        if _one_of(function, _READING_BUILTINS) or _method_name(function) in _READING_METHODS:
            return self.data(arguments, Access.READ, names), None
        touched = self._whole(arguments, names)
        if isinstance(function, types.FunctionType):
            inside = next((a for a in arguments if self.user_instance(a)), None)
            if inside is not None:
                where = getattr(function, "__qualname__", "a function")
                return touched, (
                    f"a {type(inside).__name__} object was passed to {module}.{where}, library code that dnsse "
                    "does not trace: what it reads or writes inside that object is not seen"
                )
        return touched, None

    def user_instance_type(self, kind: type) -> bool:
        init = getattr(kind, "__init__", None)
        code = getattr(init, "__code__", None)
        return code is not None and self.is_user_code(code)

    def _whole(self, arguments: list[object], names: ObjectNames) -> Touched:
        """Each argument written as a whole: the safe reading of a call dnsse cannot see into."""
        touched = []
        for value in arguments:
            for target in self.see_through(value):
                touched.append((names.name(target), Access.WRITE))
        return tuple(touched)


def _controlled(value: object) -> bool:
    """A controlled primitive (a lock, a thread, an event): dnsse's own, with points of its own."""
    return type(value).__module__.startswith("dnsse.")


def _one_of(function: object, group: frozenset) -> bool:
    """Whether ``function`` is in ``group``; a callable that cannot be hashed (a ctypes function) is in none."""
    try:
        return function in group
    except TypeError:
        return False


def _method_name(function: object) -> str | None:
    owner = getattr(function, "__objclass__", None)
    if owner is None:
        return None
    return f"{owner.__name__}.{getattr(function, '__name__', '')}"
