"""dnsse's own tensor work runs with the rank's torch function mode off.

Each rank runs under a torch function mode (:mod:`.rank_mode`) that looks
at every torch call the program makes. When the program calls
``dist.all_reduce``, torch takes the mode off the stack while the mode
handles the call, so the backend's own clones, reductions and copies are
plain torch calls. Reached another way (DDP's C++ reducer calling the
process group, ``Work.wait()``, an async transfer's step run by the
scheduler from any point of the rank), they would pass through the mode one
by one: each several times dearer, and judged as if the program had made
them. :func:`apart` runs such work as torch runs the mode's handler.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import torch

_T = TypeVar("_T")

_depth = torch._C._len_torch_function_stack
_mode_at = torch._C._get_function_stack_at
_pop = torch._C._pop_torch_function_stack
_push = torch._C._push_on_torch_function_stack


class RankModeMark:
    """Mixed into the rank's mode so this module can tell it apart from the program's own modes."""

    dnsse_rank_mode = True


def rank_mode_on_top() -> object | None:
    """The rank's mode when it is the innermost torch function mode of this thread, else ``None``."""
    depth = _depth()
    if depth == 0:
        return None
    mode = _mode_at(depth - 1)
    return mode if isinstance(mode, RankModeMark) else None


def apart(function: Callable[..., _T], *args: object, **kwargs: object) -> _T:
    """``function(*args, **kwargs)`` with the rank's mode off when it is innermost (a program's own mode stays)."""
    if rank_mode_on_top() is None:
        return function(*args, **kwargs)
    mode = _pop()
    try:
        return function(*args, **kwargs)
    finally:
        _push(mode)
