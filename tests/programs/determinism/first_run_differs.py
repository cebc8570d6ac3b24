"""Reads state dnsse does not control (a file outside the run's directory): only its first run fails."""

import os
import threading


def main() -> None:
    path = os.environ["DNSSE_TEST_COUNTER_FILE"]
    with open(path, "a") as counter:
        counter.write("x")
    with open(path) as counter:
        runs = len(counter.read())
    threads = [threading.Thread(target=lambda: None) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert runs > 1, "the first run fails"
