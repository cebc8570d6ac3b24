"""Threads programs that call APIs dnsse does not control."""

import _thread


def raw_thread() -> None:
    _thread.start_new_thread(print, ("hello",))


def raw_thread_swallowed() -> None:
    """The refusal is not the program's exception to handle: catching everything does not hide it."""
    try:
        _thread.start_new_thread(print, ("hello",))
    except BaseException:
        pass
