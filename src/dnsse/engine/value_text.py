"""A value in a few characters, for reports: ``[]``, ``[1, 2, ...]``, ``'ab...'``, ``<Box>``.

Only builtin values are spelled out; any other object is shown by its type
name, so that telling a step never runs the program's own ``__repr__`` (which
could take a lock or touch shared state while the scheduler holds control).
"""

from __future__ import annotations

import collections

WIDTH = 40
ITEMS = 4

_SCALARS = (int, float, complex, bool, type(None), type(...))
_SEQUENCES = {list: ("[", "]"), tuple: ("(", ")"), set: ("{", "}"), frozenset: ("frozenset({", "})"),
              collections.deque: ("deque([", "])")}


def value_text(value: object, width: int = WIDTH) -> str:
    """``value`` shown in at most about ``width`` characters, without calling the program's code."""
    text = _text(value, 2)
    return text if len(text) <= width else text[: width - 3] + "..."


def _text(value: object, depth: int) -> str:
    kind = type(value)
    if kind in _SCALARS:
        return repr(value)
    if kind in (str, bytes):
        text = repr(value)
        return text if len(text) <= 24 else text[:20] + "..." + text[0 if kind is str else 1]
    if kind in _SEQUENCES:
        opening, closing = _SEQUENCES[kind]
        if depth == 0:
            return f"{opening}...{closing}" if len(value) else f"{opening}{closing}"  # type: ignore[arg-type]
        items = [_text(item, depth - 1) for item in list(value)[:ITEMS]]  # type: ignore[call-overload]
        if len(value) > ITEMS:  # type: ignore[arg-type]
            items.append("...")
        if kind is tuple and len(value) == 1:  # type: ignore[arg-type]
            return f"({items[0]},)"
        return opening + ", ".join(items) + closing
    if kind is dict:
        if depth == 0:
            return "{...}" if value else "{}"
        entries = list(value.items())[:ITEMS]  # type: ignore[attr-defined]
        pairs = [f"{_text(key, 0)}: {_text(item, depth - 1)}" for key, item in entries]
        if len(value) > ITEMS:  # type: ignore[arg-type]
            pairs.append("...")
        return "{" + ", ".join(pairs) + "}"
    return f"<{kind.__name__}>"


def call_text(args: tuple, kwargs: dict) -> str:
    """The arguments of a call as the program wrote them: ``(1, 'a', key=2)``."""
    parts = [_text(value, 1) for value in args] + [f"{key}={_text(value, 1)}" for key, value in kwargs.items()]
    text = ", ".join(parts)
    return "(" + (text if len(text) <= WIDTH else text[: WIDTH - 3] + "...") + ")"
