"""CS.twostage_bad and CS.twostage_100_bad: writers set data1 then data2 = data1 + 1 in two locked
sections; a reader that runs between a writer's sections sees data1 without data2.

twostage runs ``twostage_bad.c``'s defaults (``iTThreads = 2``, ``iRThreads = 1``);
twostage_100 runs 99 writers and one reader.
"""

import threading


class Shared:
    def __init__(self) -> None:
        self.data1_lock = threading.Lock()
        self.data2_lock = threading.Lock()
        self.data1 = 0
        self.data2 = 0


def writer(s: Shared) -> None:
    with s.data1_lock:
        s.data1 = 1
    with s.data2_lock:
        s.data2 = s.data1 + 1


def reader(s: Shared) -> None:
    with s.data1_lock:
        if s.data1 == 0:
            return
        t1 = s.data1
    with s.data2_lock:
        t2 = s.data2
    assert t2 == t1 + 1, "BAD: the reader saw data1 without data2"


def _run(writers: int, readers: int) -> None:
    s = Shared()
    t_pool = [threading.Thread(target=writer, args=(s,)) for _ in range(writers)]
    r_pool = [threading.Thread(target=reader, args=(s,)) for _ in range(readers)]
    for thread in t_pool + r_pool:
        thread.start()
    for thread in t_pool + r_pool:
        thread.join()


def bad() -> None:
    _run(2, 1)


def bad100() -> None:
    _run(99, 1)
