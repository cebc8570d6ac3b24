"""Programs that leave threads behind when main returns, as real scripts do."""

import concurrent.futures
import sys
import threading

MODULE_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2)


def pool_never_shut_down() -> None:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    futures = [pool.submit(pow, 2, n) for n in range(3)]
    assert [f.result() for f in futures] == [1, 2, 4]


def module_pool() -> None:
    assert MODULE_POOL.submit(pow, 3, 2).result() == 9


def exit_with_the_pool_open() -> None:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    assert pool.submit(abs, -1).result() == 1
    sys.exit(0)


def task_still_waiting_at_exit() -> None:
    """The pool's exit joins its workers, and one never ends: a real run hangs at exit."""
    never = threading.Event()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    pool.submit(never.wait)


def own_exit_callback() -> None:
    """A worker stopped by the program's own exit callback, as concurrent.futures stops its workers."""
    stop = threading.Event()
    threading.Thread(target=stop.wait, name="poller").start()
    threading._register_atexit(stop.set)  # type: ignore[attr-defined]


def thread_left_waiting() -> None:
    never = threading.Event()
    threading.Thread(target=never.wait, name="forgotten").start()
