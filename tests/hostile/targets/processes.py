"""Targets that start processes: dnsse controls threads of one process, not these."""

import concurrent.futures
import multiprocessing


def square(x: int) -> int:
    return x * x


def pool() -> None:
    with multiprocessing.Pool(2) as workers:
        assert workers.map(square, [1, 2, 3]) == [1, 4, 9]


def process_pool_executor() -> None:
    with concurrent.futures.ProcessPoolExecutor(2) as executor:
        assert list(executor.map(square, [1, 2])) == [1, 4]
