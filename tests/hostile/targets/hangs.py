"""Targets whose threads would keep a process from ending."""

import concurrent.futures
import threading


def pool_deadlock() -> None:
    """The only worker waits for a task queued behind it: a deadlock inside ThreadPoolExecutor."""
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=1)

    def outer() -> int:
        return executor.submit(lambda: 1).result()

    executor.submit(outer).result()


def spinner() -> None:
    """A thread that never reaches a scheduling point: it outlives the wall-clock limit."""

    def spin() -> None:
        count = 0
        while True:
            count += 1

    threading.Thread(target=spin, daemon=True).start()
    lock = threading.Lock()
    with lock:
        pass
