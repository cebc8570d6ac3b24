"""CS.wronglock_bad and CS.wronglock_3_bad: one thread increments under dataLock, the others under thisLock.

wronglock: ``iNum1 = 1``, ``iNum2 = 7`` (8 threads); wronglock_3: ``iNum2 = 3`` (4 threads).
"""

import threading


class Shared:
    def __init__(self) -> None:
        self.data_lock = threading.Lock()
        self.this_lock = threading.Lock()
        self.data_value = 0


def func_a(s: Shared) -> None:
    with s.data_lock:
        x = s.data_value
        s.data_value += 1
        assert s.data_value == x + 1, "BAD: another thread incremented in between"


def func_b(s: Shared) -> None:
    with s.this_lock:
        s.data_value += 1


def _run(num1: int, num2: int) -> None:
    s = Shared()
    pool1 = [threading.Thread(target=func_a, args=(s,)) for _ in range(num1)]
    pool2 = [threading.Thread(target=func_b, args=(s,)) for _ in range(num2)]
    for thread in pool1 + pool2:
        thread.start()
    for thread in pool1 + pool2:
        thread.join()


def bad() -> None:
    _run(1, 7)


def bad3() -> None:
    _run(1, 3)
