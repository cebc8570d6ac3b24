"""Did-you-mean: the nearest of the words a command knows to one the user mistyped."""

from __future__ import annotations

import difflib
from typing import Iterable


def nearest(word: str, known: Iterable[str]) -> str | None:
    """The known word closest to ``word``, or None when none is close enough to be a slip of the keyboard."""
    matches = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``" (did you mean --budget?)"`` for a near miss, else the empty string: text to end a message with."""
    match = nearest(word, known)
    return f" (did you mean {match}?)" if match is not None else ""
