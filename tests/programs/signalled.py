"""A program that signals its own process in every run, as servers and training loops that stop themselves do."""

import os
import signal
import threading


def main() -> None:
    # Two in a row: the second may land on the main thread between its handlers and its next wait.
    for _ in range(2):
        os.kill(os.getpid(), signal.SIGUSR1)
    lock = threading.Lock()
    counter = [0]

    def work() -> None:
        for _ in range(2):
            with lock:
                counter[0] += 1

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter[0] == 4
