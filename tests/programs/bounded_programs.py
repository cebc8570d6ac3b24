"""Programs small enough for brute force to run every schedule: the yardstick of ipb and idb (tests/test_bounded_search.py)."""

import threading


class State:
    def __init__(self):
        self.x = 0
        self.lock = threading.Lock()


def unlocked(s):
    v = s.x
    s.x = v + 1


def locked(s):
    with s.lock:
        s.x = s.x + 1


def lost_update():
    s = State()
    other = threading.Thread(target=unlocked, args=(s,))
    other.start()
    unlocked(s)
    other.join()
    assert s.x == 2, "lost update"


def guarded():
    s = State()
    other = threading.Thread(target=locked, args=(s,))
    other.start()
    locked(s)
    other.join()
    assert s.x == 2, "lost update"



def lock_order(s):
    with s.lock:
        with s.other:
            pass


def reverse_order(s):
    with s.other:
        with s.lock:
            pass


def deadlock():
    s = State()
    s.other = threading.Lock()
    thread = threading.Thread(target=reverse_order, args=(s,))
    thread.start()
    lock_order(s)
    thread.join()


def writer(s):
    s.x = 1



def three_agents():
    s = State()
    first = threading.Thread(target=writer, args=(s,))
    second = threading.Thread(target=unlocked, args=(s,))
    first.start()
    second.start()
    first.join()
    second.join()
