"""CS.din_phil2_sat .. din_phil7_sat: N philosophers each take both forks in one atomic block.

The ``_sat`` programs then count the philosophers who ate with an unlocked
``++phil`` and assert that fewer than N did: the assertion fails once all N
ate. The ``_unsat`` programs (``ok``) have no counter.
"""

import threading


class Table:
    def __init__(self, n: int) -> None:
        self.n = n
        self.forks = [threading.Lock() for _ in range(n)]
        self.atomic = threading.Lock()  # __ESBMC_atomic_begin/end
        self.phil = 0


def philosopher(table: Table, ident: int, count: bool) -> None:
    left = ident
    right = (ident + 1) % table.n
    with table.atomic:
        table.forks[right].acquire()
        table.forks[left].acquire()
        table.forks[left].release()
        table.forks[right].release()
    if count:
        table.phil += 1
        if table.phil == table.n:
            assert False, "BAD: every philosopher ate"


def _dine(n: int, count: bool) -> None:
    table = Table(n)
    threads = [threading.Thread(target=philosopher, args=(table, i, count)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def bad2() -> None:
    _dine(2, True)


def bad3() -> None:
    _dine(3, True)


def bad4() -> None:
    _dine(4, True)


def bad5() -> None:
    _dine(5, True)


def bad6() -> None:
    _dine(6, True)


def bad7() -> None:
    _dine(7, True)


def ok2() -> None:
    _dine(2, False)


def ok3() -> None:
    _dine(3, False)


def ok4() -> None:
    _dine(4, False)


def ok5() -> None:
    _dine(5, False)


def ok6() -> None:
    _dine(6, False)


def ok7() -> None:
    _dine(7, False)
