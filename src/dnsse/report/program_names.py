"""The objects a step touches, named as the program names them: ``self.items of Box#1``.

The engine names objects by identity and order of first use (``o1``,
``o1.items``; see :mod:`dnsse.engine.object_names`), which is right for
telling dependent steps apart and useless to a person. While a story is
recorded, each such name is looked up in the frames of the agent that takes
the step: a local variable bound to the object (``box``), or an attribute of
one (``self.items``), or a global. An instance of the program's own classes
is also called by its class and the order it was first seen in
(``Box#1``), so that ``self.items`` in two methods reads as one object.

Values are shown with :func:`~dnsse.engine.value_text.value_text`, which
never runs the program's code.
"""

from __future__ import annotations

import types
import weakref
from collections import Counter
from typing import Iterator

from dnsse.engine.object_names import ObjectNames, number_of
from dnsse.engine.value_text import value_text

_MISSING = object()
# How many frames of the agent, from the innermost of the program outwards, are searched for a name.
FRAMES_SEARCHED = 4
_BUILTIN_MODULES = ("builtins", "collections")


class ProgramNames:
    """Names and values of the engine's objects, for one recorded run."""

    def __init__(self, objects: ObjectNames) -> None:
        self._objects = objects
        # id -> (a reference that says whether the instance still lives, its label ``Box#1``)
        self._instances: dict[int, tuple[object, str]] = {}
        self._per_class: Counter[str] = Counter()

    def label(self, name: str, frame: types.FrameType | None) -> str:
        """What the program calls the engine's object ``name`` where ``frame`` stands."""
        if name.startswith("global:"):
            return name.partition(":")[2]
        if name.startswith("module:"):
            return name.partition(":")[2]
        if number_of(name) is None:
            return name  # a primitive's own name (Condition#1, lock#2, ref:4): already the program's
        base, _, attribute = name.partition(".")
        owner = self._objects.object_of(base)
        if owner is None:
            return name
        if attribute:
            spelled = self._spelling(owner, frame)
            instance = self.instance_label(owner)
            if spelled is None:
                return f"{instance or base}.{attribute}"
            return f"{spelled}.{attribute}" + (f" of {instance}" if instance and instance != spelled else "")
        if isinstance(owner, types.CellType):
            return _closure_variable(owner, frame) or f"a closure's variable ({base})"
        return self._whole(owner, frame) or f"a {type(owner).__name__} ({base})"

    def value(self, name: str, frame: types.FrameType | None) -> str | None:
        """The object's value now, in a few characters; ``None`` where it is not known."""
        if name.startswith("global:"):
            if frame is None:
                return None
            found = frame.f_globals.get(name.partition(":")[2], _MISSING)
            return None if found is _MISSING else value_text(found)
        if number_of(name) is None:
            return None
        base, _, attribute = name.partition(".")
        owner = self._objects.object_of(base)
        if owner is None:
            return None
        if not attribute:
            if isinstance(owner, types.CellType):
                try:
                    return self._shown(owner.cell_contents)
                except ValueError:
                    return None
            return value_text(owner)
        found = vars(owner).get(attribute, _MISSING) if _has_dict(owner) else _MISSING
        return None if found is _MISSING else self._shown(found)

    def _shown(self, value: object) -> str:
        """An instance of the program's classes by its label (``Counter#1``), any other value by its text."""
        return self.instance_label(value) or value_text(value)

    def instance_label(self, value: object) -> str | None:
        """``Box#1`` for an instance of one of the program's classes; ``None`` for builtin values."""
        kind = type(value)
        if kind.__module__ in _BUILTIN_MODULES or kind.__module__.startswith("dnsse.") or not _has_dict(value):
            return None  # a builtin value, or a controlled primitive (named by its own operations)
        known = self._instances.get(id(value))
        if known is not None and _alive(known[0]) is value:
            return known[1]
        self._per_class[kind.__qualname__] += 1
        label = f"{kind.__qualname__}#{self._per_class[kind.__qualname__]}"
        try:
            keeper: object = weakref.ref(value)
        except TypeError:
            keeper = value
        self._instances[id(value)] = (keeper, label)
        return label

    def _whole(self, value: object, frame: types.FrameType | None) -> str | None:
        """A container as the program reaches it: ``self.items of Box#1``, ``queue``."""
        for scope in _frames(frame):
            for variable, held in list(scope.f_locals.items()):
                if held is value:
                    return variable
            for variable, held in list(scope.f_locals.items()):
                inner = _attribute_holding(held, value)
                if inner is not None:
                    instance = self.instance_label(held)
                    return f"{variable}.{inner}" + (f" of {instance}" if instance else "")
        if frame is not None:
            for variable, held in list(frame.f_globals.items()):
                if held is value:
                    return variable
        return None

    def _spelling(self, owner: object, frame: types.FrameType | None) -> str | None:
        for scope in _frames(frame):
            for variable, held in list(scope.f_locals.items()):
                if held is owner:
                    return variable
        return None


def _frames(frame: types.FrameType | None) -> Iterator[types.FrameType]:
    for _ in range(FRAMES_SEARCHED):
        if frame is None:
            return
        yield frame
        frame = frame.f_back


def _attribute_holding(holder: object, value: object) -> str | None:
    """The name of an attribute of ``holder`` (an instance with a ``__dict__``) bound to ``value``."""
    if isinstance(holder, (types.ModuleType, type)) or not _has_dict(holder):
        return None
    try:
        attributes = vars(holder)
    except TypeError:
        return None
    for attribute, held in list(attributes.items()):
        if held is value:
            return attribute
    return None


def _closure_variable(cell: types.CellType, frame: types.FrameType | None) -> str | None:
    """The name of the closure variable that ``cell`` holds, where ``frame``'s code binds or uses one."""
    try:
        contents = cell.cell_contents
    except ValueError:
        return None  # empty: nothing to match it by
    for scope in _frames(frame):
        code = scope.f_code
        for variable in (*code.co_cellvars, *code.co_freevars):
            if scope.f_locals.get(variable, _MISSING) is contents:
                return variable
    return None


def _has_dict(value: object) -> bool:
    """Whether ``value`` has a ``__dict__``, asked of its type: no ``__getattr__`` of the program runs."""
    return type(value).__dictoffset__ != 0


def _alive(keeper: object) -> object:
    return keeper() if isinstance(keeper, weakref.ref) else keeper
