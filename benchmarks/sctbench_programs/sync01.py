"""CS.sync01: a producer waits for num to reach 0, a consumer for num above 0; bad starts at num = 1 and never consumes."""

import threading


class Shared:
    def __init__(self, num: int) -> None:
        self.m = threading.Lock()
        self.empty = threading.Condition(self.m)
        self.full = threading.Condition(self.m)
        self.num = num


def producer(s: Shared) -> None:
    with s.m:
        while s.num > 0:
            s.empty.wait()
        s.num += 1
    with s.m:
        s.full.notify()


def consumer(s: Shared, consume: bool) -> None:
    with s.m:
        while s.num == 0:
            s.full.wait()
        if consume:
            s.num -= 1
    with s.m:
        s.empty.notify()


def _run(num: int, consume: bool) -> None:
    s = Shared(num)
    threads = [threading.Thread(target=producer, args=(s,)), threading.Thread(target=consumer, args=(s, consume))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def bad() -> None:
    _run(1, False)


def ok() -> None:
    _run(0, True)
