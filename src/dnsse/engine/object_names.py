"""Names of the Python objects that steps touch, by order of first use.

Two steps are dependent when they touch one object, so an object needs a name
that says "this very object" (not "some object with an attribute ``count``").
An execution names objects ``o1``, ``o2``, ... in the order they are first
touched. Executions that share a prefix of choices run that prefix alike, so
an object first touched in the shared prefix has the same name in all of
them; an object first touched later may be named differently in each (see
:func:`fresh_in`, which lets a comparison across executions stay safe).

An ``id`` is reused once its object dies, and a new object must not inherit
an old name. An object that takes weak references is watched through one,
so naming it does not keep it alive: the program's ``weakref.finalize``,
``__del__`` and weak caches see it die when the program drops it, as they do
without dnsse, and a later object at its ``id`` gets a name of its own.
Objects without weak references (lists, dicts, cells) are kept alive until
the execution ends instead.
"""

from __future__ import annotations

import re
import weakref

_NUMBER = re.compile(r"^o(\d+)(?:\.|$)")


class ObjectNames:
    """Gives each object touched in one execution a name, ``o<N>``, in order of first use."""

    __slots__ = ("_names", "_keys", "_watched", "_alive", "_count")

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        # name -> the id it was given to, for reports that look an object up by its name.
        self._keys: dict[str, int] = {}
        # id -> a weak reference to the object named at that id, for objects that take one.
        self._watched: dict[int, weakref.ref] = {}
        # id -> an object kept alive until the execution ends (it takes no weak reference).
        self._alive: dict[int, object] = {}
        self._count = 0

    def name(self, value: object) -> str:
        key = id(value)
        name = self._names.get(key)
        if name is not None:
            watched = self._watched.get(key)
            if watched is None or watched() is value:
                return name
        self._count += 1
        name = self._names[key] = f"o{self._count}"
        self._keys[name] = key
        if type(value).__weakrefoffset__:
            self._watched[key] = weakref.ref(value)
        else:
            self._watched.pop(key, None)
            self._alive[key] = value
        return name

    def object_of(self, name: str) -> object | None:
        """The live object named ``name`` (``o3``), or ``None`` once it died; for reports."""
        key = self._keys.get(name)
        if key is None or self._names.get(key) != name:
            return None
        watched = self._watched.get(key)
        if watched is not None:
            found = watched()
            return found if found is not None and id(found) == key else None
        return self._alive.get(key)


def attribute_name(owner: str, attribute: str) -> str:
    """The name of one attribute of a named object: ``o3.count``."""
    return f"{owner}.{attribute}"


def number_of(name: str) -> int | None:
    """``N`` of an object name ``oN`` or ``oN.attr``; ``None`` for other names (``lock#2``)."""
    match = _NUMBER.match(name)
    return int(match.group(1)) if match else None


def fresh_in(name: str, known: int) -> bool:
    """Whether ``name`` was given after the first ``known`` objects were named."""
    number = number_of(name)
    return number is not None and number > known
