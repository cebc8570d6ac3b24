"""A thread pool whose workers update one counter under a lock: many steps on a few objects."""

import concurrent.futures
import threading


def main() -> None:
    lock = threading.Lock()
    totals = {"count": 0}

    def add(amount: int) -> None:
        with lock:
            totals["count"] += amount

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        for future in [pool.submit(add, n) for n in range(6)]:
            future.result()
    assert totals["count"] == 15
