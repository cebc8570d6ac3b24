"""CS.arithmetic_prog: a producer and a consumer of N = 3 items under a lock and two conditions."""

import threading

N = 3


class Shared:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.empty = threading.Condition(self.m)
        self.full = threading.Condition(self.m)
        self.num = 0
        self.total = 0
        self.flag = False


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
            s.total = s.total + j
            s.num -= 1
        with s.m:
            s.empty.notify()
        j += 1
    s.total = s.total + j
    s.flag = True


def _run(correct: bool) -> None:
    s = Shared()
    t1 = threading.Thread(target=producer, args=(s,))
    t2 = threading.Thread(target=consumer, args=(s,))
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    if s.flag:
        if correct:
            assert s.total == (N * (N + 1)) // 2
        else:
            assert s.total != (N * (N + 1)) // 2, "BAD: the total is N(N+1)/2"


def bad() -> None:
    _run(correct=False)


def ok() -> None:
    _run(correct=True)
