"""Names of the Python objects that steps touch, by order of first use.

Two steps are dependent when they touch one object, so an object needs a name
that says "this very object" (not "some object with an attribute ``count``").
An execution names objects ``o1``, ``o2``, ... in the order they are first
touched. Executions that share a prefix of choices run that prefix alike, so
an object first touched in the shared prefix has the same name in all of
them; an object first touched later may be named differently in each (see
:func:`fresh_in`, which lets a comparison across executions stay safe).

The names keep their objects alive until the execution ends: an ``id`` is
reused once its object dies, and a new object must not inherit an old name.
"""

from __future__ import annotations

import re

_NUMBER = re.compile(r"^o(\d+)(?:\.|$)")


class ObjectNames:
    """Gives each object touched in one execution a name, ``o<N>``, in order of first use."""

    __slots__ = ("_names", "_alive")

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._alive: list[object] = []

    def name(self, value: object) -> str:
        key = id(value)
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = f"o{len(self._alive) + 1}"
            self._alive.append(value)
        return name

    def __len__(self) -> int:
        return len(self._alive)


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
