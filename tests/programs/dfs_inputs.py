"""Programs whose bugs need an explored input's value, for dfs's statement about inputs."""

import threading
from typing import Annotated, Literal

import dnsse


def third_value_fails(n: Annotated[int, dnsse.Range(0, 5)] = 0) -> None:
    """No race at all: only n=3 fails."""
    assert n != 3, "n is 3"


def early_read(fast: bool = False) -> None:
    """With fast=True main reads what the thread may not have written yet."""
    written = []
    worker = threading.Thread(target=lambda: written.append(1))
    worker.start()
    if fast:
        assert written == [1], "read before the write"
    worker.join()


def counter(guard: Literal["lock", "none"] = "lock", step: Annotated[int, dnsse.Range(1, 2)] = 1) -> None:
    """A thread adds ``step`` to a counter main also adds to; without the lock an update can be lost."""
    lock = threading.Lock()
    total = [0]

    def add() -> None:
        if guard == "lock":
            with lock:
                total[0] = total[0] + step
        else:
            value = total[0]
            total[0] = value + step

    worker = threading.Thread(target=add)
    worker.start()
    add()
    worker.join()
    dnsse.emit("final", state=repr((guard, step, total[0])))
    assert total[0] == 2 * step, f"lost an update: {total[0]}"


def locked_with_modes(verbose: bool = False, mode: Literal["a", "b", "c"] = "a") -> None:
    """Correct for every input: a thread appends under a lock, main joins and checks."""
    seen = []
    lock = threading.Lock()

    def record() -> None:
        with lock:
            seen.append(mode)

    worker = threading.Thread(target=record)
    worker.start()
    worker.join()
    assert seen == [mode]
    if verbose:
        dnsse.emit("verbose", mode=mode)


def scaled(scale: Annotated[float, dnsse.Range(0.0, 1.0)] = 0.5) -> None:
    """Correct, with a float input dfs cannot enumerate."""
    assert 0.0 <= scale <= 1.0
