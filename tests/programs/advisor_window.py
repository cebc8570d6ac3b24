"""A half-applied update visible in a one-step window.

The trainer publishes a new version in two steps (``phase = 1`` then
``phase = 2``); the reader checks the phase once, after a long stretch of
other work. Only a reader whose check lands exactly between the trainer's
two writes sees the half-applied state: random schedules rarely put it there,
an advisor that reads the code (or the observed accesses) puts it there at once.
"""

import threading


class Weights:
    def __init__(self) -> None:
        self.phase = 0
        self.log: list[int] = []


def main() -> None:
    weights = Weights()

    def trainer() -> None:
        for step in range(25):
            weights.log.append(step)
        weights.phase = 1
        weights.phase = 2

    def reader() -> None:
        seen = 0
        for _ in range(25):
            seen += len(weights.log)
        assert weights.phase != 1, "the reader saw a half-applied update"

    threads = [threading.Thread(target=trainer), threading.Thread(target=reader)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
