"""Targets that take their own process down: dnsse must report each as a crash and go on."""

import ctypes
import os
import signal
import threading


def segfault() -> None:
    """Only one interleaving crashes: the second worker to run reads address 0."""
    order = []

    def worker(name: str) -> None:
        order.append(name)
        if order == ["b", "a"]:
            ctypes.string_at(0)

    threads = [threading.Thread(target=worker, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def hard_exit() -> None:
    worker = threading.Thread(target=os._exit, args=(7,))
    worker.start()
    worker.join()


def alarm() -> None:
    signal.alarm(1)
    while True:
        pass


def killed() -> None:
    """As the kernel's out-of-memory killer would."""
    os.kill(os.getpid(), signal.SIGKILL)


def sometimes_exits(flag: bool = False) -> None:
    """Crashes in the executions where the input is true, passes in the others."""
    if flag:
        os._exit(3)


def crash_or_race(flag: bool = False) -> None:
    """Crashes where the input is true; elsewhere two threads may lose an update."""
    if flag:
        os._exit(3)
    box = [0]

    def add() -> None:
        value = box[0]
        box[0] = value + 1

    threads = [threading.Thread(target=add) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert box[0] == 2, f"lost an update: {box[0]}"


def exits_three() -> None:
    """No inputs, and the status dnsse itself uses for its internal errors."""
    worker = threading.Thread(target=os._exit, args=(3,))
    worker.start()
    worker.join()


def crash_or_lost_update() -> None:
    """For dfs, which keeps the default inputs: one order of the threads kills the process, others lose an update."""
    order = []
    box = [0]

    def worker(name: str) -> None:
        order.append(name)
        if order == ["b", "a"]:
            os._exit(5)
        value = box[0]
        box[0] = value + 1

    threads = [threading.Thread(target=worker, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert box[0] == 2, f"lost an update: {box[0]}"
