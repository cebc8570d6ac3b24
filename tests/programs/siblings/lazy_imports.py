"""Threads that import modules lazily, inside their functions: only the first execution of a process loads them."""

import threading


def worker(results: list, index: int) -> None:
    import decimal
    import json
    import statistics

    import lazy_registry
    import tally

    assert lazy_registry.registry["ready"]
    results.append((index, json.dumps(str(decimal.Decimal(index) / 3)), statistics.mean([index, 1]), tally.bump()))


def main() -> None:
    results: list = []
    threads = [threading.Thread(target=worker, args=(results, index)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2
    assert sorted(bumped for *_, bumped in results) == [1, 2], f"a lost update in tally: {results}"
