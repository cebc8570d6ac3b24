"""A hundred threads: ninety-nine writers in two locked sections each, and one reader between them.

The shape of SCTBench's twostage_100, with a reader that accepts what it may
see (the second write not made yet), so every execution must run to its end
and pass. Each execution that
reaches its end appends a line to the file named by ``MANY_THREADS_LOG``: a
test counts them against the executions the campaign reports.
"""

import os
import threading

WRITERS = 99


class Shared:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.second_lock = threading.Lock()
        self.first = 0
        self.second = 0
        self.finished = 0


def writer(shared: Shared) -> None:
    with shared.lock:
        shared.first = 1
    with shared.second_lock:
        shared.second = shared.first + 1
        shared.finished += 1


def reader(shared: Shared) -> None:
    with shared.lock:
        if shared.first == 0:
            return
        first = shared.first
    with shared.second_lock:
        second = shared.second
    assert second in (0, first + 1), "the reader saw a second write that no writer made"


def main() -> None:
    shared = Shared()
    threads = [threading.Thread(target=writer, args=(shared,)) for _ in range(WRITERS)]
    threads.append(threading.Thread(target=reader, args=(shared,)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert shared.finished == WRITERS
    log = os.environ.get("MANY_THREADS_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as ends:
            ends.write("end\n")


class Flag:
    def __init__(self) -> None:
        self.value = 0


def ask_the_interpreter(flag: Flag) -> None:
    import ctypes

    flag.value = ctypes.pythonapi.Py_IsInitialized()


def calls_through_ctypes() -> None:
    """A thread that calls a C function through ctypes (whose function objects cannot be hashed)."""
    flag = Flag()
    thread = threading.Thread(target=ask_the_interpreter, args=(flag,))
    thread.start()
    thread.join()
    assert flag.value == 1
