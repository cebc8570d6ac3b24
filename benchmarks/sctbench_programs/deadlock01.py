"""CS.deadlock01_bad: two threads take two locks in opposite orders."""

import threading


class Shared:
    def __init__(self) -> None:
        self.a = threading.Lock()
        self.b = threading.Lock()
        self.counter = 1


def first(s: Shared) -> None:
    with s.a:
        with s.b:
            s.counter += 1


def second(s: Shared) -> None:
    with s.b:
        with s.a:
            s.counter -= 1


def bad() -> None:
    s = Shared()
    threads = [threading.Thread(target=first, args=(s,)), threading.Thread(target=second, args=(s,))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
