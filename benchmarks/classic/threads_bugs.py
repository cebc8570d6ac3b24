"""Small classic concurrency bugs in plain threads: the portfolio's yardstick (benchmarks/portfolio.py)."""

import threading


def _both(first, second):
    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def lock_order_deadlock():
    """Two locks taken in opposite orders."""
    a, b = threading.Lock(), threading.Lock()

    def forward():
        with a:
            with b:
                pass

    def backward():
        with b:
            with a:
                pass

    _both(forward, backward)


class _Registry:
    instance = None


def lazy_init():
    """Check-then-act on a lazily built singleton: two threads may both build it."""
    registry = _Registry()
    built = []

    def get():
        if registry.instance is None:
            built.append(1)
            registry.instance = object()

    _both(get, get)
    assert len(built) == 1, f"the singleton was built {len(built)} times"


def lost_update():
    """A read-modify-write of a shared counter without a lock."""
    state = {"count": 0}

    def bump():
        value = state["count"]
        state["count"] = value + 1

    _both(bump, bump)
    assert state["count"] == 2, f"count is {state['count']} after two increments"


def missed_notify():
    """A notify sent before the waiter waits, with no predicate checked: the waiter sleeps forever."""
    condition = threading.Condition()

    def waiter():
        with condition:
            condition.wait()

    def notifier():
        with condition:
            condition.notify()

    _both(waiter, notifier)
