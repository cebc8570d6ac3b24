"""When two bugs a campaign finds are one bug: the same failure, whichever agents played which part.

A collective mismatch seen with rank 1 first and with rank 0 first, a lost
update between Thread-1 and Thread-2 or between Thread-2 and Thread-3, at
step 40 or at step 52: each is one bug, reported once and counted as often
as it was hit. What the run computed (the values in a message) still tells
bugs apart.
"""

from __future__ import annotations

import re

from dnsse.engine.bugs import Bug

# Agent names that a schedule may hand out in another order, and step numbers: replaced by a mark.
_RENAMINGS = (
    (re.compile(r"\b(ranks?) \d+(?: and \d+)?"), r"\1 #"),
    (re.compile(r"\b(Thread|Task|ThreadPoolExecutor-N)[-_]\d+"), r"\1-#"),
    (re.compile(r"\b([A-Z]\w*)#\d+"), r"\1#"),
    (re.compile(r"\bsteps? \d+"), "step #"),
)
_WORD = re.compile(r"[^\s,;:]+")


def bug_family(bug: Bug) -> tuple[str, tuple[str, ...]]:
    """The key under which a campaign counts ``bug``: its kind and its message's words, agents unnamed.

    The words are sorted, so that a message listing the same parties in
    another order (``X on rank 0, Y on rank 1`` and ``Y on rank 1, X on
    rank 0``) has the same key.
    """
    kind, message = bug.signature()
    for pattern, mark in _RENAMINGS:
        message = pattern.sub(mark, message)
    return kind, tuple(sorted(_WORD.findall(message)))
