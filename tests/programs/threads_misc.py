"""Sleeping, timed joins and a failing worker."""

import threading
import time


def sleepy():
    started = time.monotonic()

    def nap():
        time.sleep(30)

    threads = [threading.Thread(target=nap) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.monotonic() - started >= 30


def join_with_timeout():
    release = threading.Event()
    t = threading.Thread(target=release.wait, daemon=True)
    t.start()
    t.join(timeout=2.0)
    assert t.is_alive()
    release.set()
    t.join()
    assert not t.is_alive()


def divide(n):
    return 10 // n


def failing_worker():
    t = threading.Thread(target=divide, args=(0,))
    t.start()
    t.join()
