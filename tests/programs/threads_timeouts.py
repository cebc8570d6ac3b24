"""Timed waits whose timeout fires only when the thing waited for is merely slow.

Each entry point asserts the happy path; the timeout branch (a real outcome
when the other thread is slower than the timeout) raises ``AssertionError``
naming it, so a strategy that reaches the branch reports an exception bug.
"""

import queue
import threading


def slow_holder():
    """``lock.acquire(timeout=5)`` while the holder is busy for a while: no thread is ever stuck."""
    lock = threading.Lock()
    box = {"work": 0}

    def holder():
        with lock:
            for _ in range(3):
                box["work"] += 1

    t = threading.Thread(target=holder)
    t.start()
    if not lock.acquire(timeout=5):
        raise AssertionError("lock.acquire timed out while the holder was busy")
    lock.release()
    t.join()


def slow_setter():
    ready = threading.Event()

    def setter():
        ready.set()

    t = threading.Thread(target=setter)
    t.start()
    if not ready.wait(2.0):
        raise AssertionError("Event.wait timed out before the setter ran")
    t.join()


def slow_producer():
    items = queue.Queue()

    def producer():
        items.put("job")

    t = threading.Thread(target=producer)
    t.start()
    try:
        items.get(timeout=1.0)
    except queue.Empty:
        raise AssertionError("queue.get timed out before the producer put") from None
    t.join()


def slow_worker():
    def work():
        pass

    t = threading.Thread(target=work)
    t.start()
    t.join(timeout=3.0)
    if t.is_alive():
        raise AssertionError("Thread.join timed out while the worker still ran")


def slow_notifier():
    cond = threading.Condition()
    box = []

    def notifier():
        with cond:
            box.append(1)
            cond.notify()

    t = threading.Thread(target=notifier)
    t.start()
    with cond:
        while not box:
            if not cond.wait(2.0):
                raise AssertionError("Condition.wait timed out before the notify")
    t.join()


def slow_releaser():
    tokens = threading.Semaphore(0)
    t = threading.Thread(target=tokens.release)
    t.start()
    if not tokens.acquire(timeout=2.0):
        raise AssertionError("Semaphore.acquire timed out before the release")
    t.join()


def slow_party():
    gate = threading.Barrier(2)

    def other():
        try:
            gate.wait()
        except threading.BrokenBarrierError:
            pass

    t = threading.Thread(target=other)
    t.start()
    try:
        gate.wait(timeout=2.0)
    except threading.BrokenBarrierError:
        raise AssertionError("Barrier.wait timed out before the other party came") from None
    t.join()


def slow_consumer():
    items = queue.Queue(maxsize=1)
    items.put("first")
    t = threading.Thread(target=items.get)
    t.start()
    try:
        items.put("second", timeout=3.0)
    except queue.Full:
        raise AssertionError("queue.put timed out while the consumer was merely slow") from None
    t.join()
