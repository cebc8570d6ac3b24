"""Two requests check that the pool has a free connection, then take it: both may pass the check."""

import threading


class Pool:
    def __init__(self) -> None:
        self.free = 1
        self.handed_out = 0


def borrow(pool: Pool) -> None:
    if pool.free > 0:
        pool.free -= 1
        pool.handed_out += 1


def setup() -> Pool:
    return Pool()


WORKERS = [borrow, borrow]


def invariant(pool: Pool) -> bool:
    return pool.free >= 0 and pool.handed_out <= 1


def main() -> None:
    pool = setup()
    threads = [threading.Thread(target=worker, args=(pool,)) for worker in WORKERS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert invariant(pool), f"free={pool.free}, handed out {pool.handed_out}"
