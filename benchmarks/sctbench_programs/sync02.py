"""CS.sync02_bad: a producer and a consumer of N = 2 items, but the count starts at 2: the producer waits for good."""

import threading

N = 2


class Shared:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.empty = threading.Condition(self.m)
        self.full = threading.Condition(self.m)
        self.num = 2


def producer(s: Shared) -> None:
    i = 0
    while i < N:
        with s.m:
            while s.num > 0:
                s.empty.wait()
            s.num += 1
        # pthread_cond_signal after the unlock, as in C (Python needs the lock held to notify).
        with s.m:
            s.full.notify()
        i += 1


def consumer(s: Shared) -> None:
    j = 0
    while j < N:
        with s.m:
            while s.num == 0:
                s.full.wait()
            s.num -= 1
        with s.m:
            s.empty.notify()
        j += 1


def bad() -> None:
    s = Shared()
    threads = [threading.Thread(target=producer, args=(s,)), threading.Thread(target=consumer, args=(s,))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
