"""A program that replaces ``print`` for good, as a script may: each execution must start from the real one."""

import threading


def wraps_print_once() -> None:
    import builtins

    assert not getattr(builtins.print, "quiet", False), "print is still the one an earlier execution put there"

    def quiet(*args, **kwargs) -> None:
        pass

    quiet.quiet = True  # type: ignore[attr-defined]
    builtins.print = quiet
    worker = threading.Thread(target=lambda: print("from a thread"))
    worker.start()
    worker.join()
