"""A campaign long enough to be interrupted, with a bug that shows up in some executions only."""

import threading


def racy(rounds: int = 300) -> None:
    lock = threading.Lock()
    counter = [0]

    def work() -> None:
        for _ in range(rounds):
            with lock:
                pass
        value = counter[0]
        counter[0] = value + 1

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter[0] == 2, f"lost update: {counter[0]}"


def locked(rounds: int = 2, workers: int = 3) -> None:
    """Correct: dfs verifies it, in enough executions to be interrupted on the way."""
    lock = threading.Lock()
    counter = [0]

    def work() -> None:
        for _ in range(rounds):
            with lock:
                counter[0] += 1

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter[0] == workers * rounds
