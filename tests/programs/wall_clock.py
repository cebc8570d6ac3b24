"""Programs that hit the wall-clock limit (a hang, a long computation), and one that hits the step limit."""

import hashlib
import os
import threading


def blocked_read() -> None:
    """A thread blocks reading a pipe nobody writes: an OS call dnsse does not control."""
    readable, _ = os.pipe()

    def reader() -> None:
        os.read(readable, 1)

    worker = threading.Thread(target=reader)
    worker.start()
    worker.join()


def long_computation() -> None:
    """A thread computes for some seconds of CPU (in C, without the GIL) between two scheduling points."""

    def hasher() -> None:
        hashlib.pbkdf2_hmac("sha256", b"password", b"salt", 6_000_000)

    worker = threading.Thread(target=hasher)
    worker.start()
    worker.join()


def livelock() -> None:
    """Two threads each wait, politely, for a flag only the other could set: a livelock under control."""
    lock = threading.Lock()
    flags = {"a": False, "b": False}

    def polite(mine: str, theirs: str) -> None:
        while True:
            with lock:
                if flags[theirs]:
                    flags[mine] = True
                    return

    threads = [threading.Thread(target=polite, args=pair) for pair in (("a", "b"), ("b", "a"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
