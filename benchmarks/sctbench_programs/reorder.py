"""CS.reorder_3/4/5/10/20_bad: setters write a = 1 then b = -1, unlocked; a checker sees one without the other.

``reorder_N`` runs N threads: N - 1 setters and one checker (``reorder_bad.c``
with ``iSet = N - 1``, ``iCheck = 1``).
"""

import threading


class Shared:
    def __init__(self) -> None:
        self.a = 0
        self.b = 0


def setter(s: Shared) -> None:
    s.a = 1
    s.b = -1


def checker(s: Shared) -> None:
    a = s.a
    b = s.b
    assert (a == 0 and b == 0) or (a == 1 and b == -1), "BAD: the checker saw one write without the other"


def _run(threads_count: int) -> None:
    s = Shared()
    setters = [threading.Thread(target=setter, args=(s,)) for _ in range(threads_count - 1)]
    checkers = [threading.Thread(target=checker, args=(s,))]
    for thread in setters + checkers:
        thread.start()
    for thread in setters + checkers:
        thread.join()


def bad3() -> None:
    _run(3)


def bad4() -> None:
    _run(4)


def bad5() -> None:
    _run(5)


def bad10() -> None:
    _run(10)


def bad20() -> None:
    _run(20)
