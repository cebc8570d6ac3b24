"""sys.exit in a target: status 0 is a normal end, any other status is reported."""

import sys
import threading


def exit_zero() -> None:
    counter = [0]

    def work() -> None:
        counter[0] += 1

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    sys.exit(0)


def exit_none() -> None:
    sys.exit()


def exit_three() -> None:
    sys.exit(3)
