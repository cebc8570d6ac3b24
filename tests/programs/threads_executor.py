"""concurrent.futures and threading.local under control."""

import threading
from concurrent.futures import ThreadPoolExecutor, as_completed


def pool_sum(jobs: int = 6) -> None:
    total = {"n": 0}
    lock = threading.Lock()

    def work(i: int) -> int:
        with lock:
            total["n"] += i
        return i * i

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(work, i) for i in range(jobs)]
        squares = sorted(f.result() for f in as_completed(futures))
    assert squares == [i * i for i in range(jobs)]
    assert total["n"] == sum(range(jobs))


def pool_lost_update(jobs: int = 4) -> None:
    total = {"n": 0}

    def work(i: int) -> None:
        value = total["n"]
        total["n"] = value + i

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(work, range(jobs)))
    assert total["n"] == sum(range(jobs)), total


def pool_waits_for_itself() -> None:
    """A task that waits for a task queued behind it on a one-worker pool never finishes."""
    pool = ThreadPoolExecutor(max_workers=1)

    def inner() -> int:
        return 1

    def outer() -> int:
        return pool.submit(inner).result()

    assert pool.submit(outer).result() == 1
    pool.shutdown()


def thread_local_per_thread() -> None:
    local = threading.local()
    seen = []

    def work(i: int) -> None:
        local.value = i
        threading.Event().wait(0)
        seen.append(local.value == i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [True, True, True]
    assert not hasattr(local, "value")


def pool_shared_by_threads() -> None:
    """Two threads submit to one pool at once (the pool's submit holds a module-wide lock)."""
    pool = ThreadPoolExecutor(max_workers=2)
    results = []

    def client(i: int) -> None:
        results.append(pool.submit(pow, i, 2).result())

    threads = [threading.Thread(target=client, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    pool.shutdown()
    assert sorted(results) == [0, 1]
