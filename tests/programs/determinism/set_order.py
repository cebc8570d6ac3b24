"""Threads started in the order of a set of strings, whose order depends on the hash seed."""

import threading

NAMES = {"alpha", "bravo", "charlie", "delta"}


def main() -> None:
    finished = []

    def work(name: str) -> None:
        finished.append(name)

    threads = [threading.Thread(target=work, args=(name,)) for name in NAMES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert finished[0] != "alpha", "alpha finished first"
