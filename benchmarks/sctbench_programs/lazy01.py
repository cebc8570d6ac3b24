"""CS.lazy01_bad: two locked additions (1 and 2) and a locked check that the sum is below 3."""

import threading


class Shared:
    def __init__(self) -> None:
        self.mutex = threading.Lock()
        self.data = 0


def add_one(s: Shared) -> None:
    with s.mutex:
        s.data += 1


def add_two(s: Shared) -> None:
    with s.mutex:
        s.data += 2


def check(s: Shared) -> None:
    with s.mutex:
        assert s.data < 3, "BAD: data reached 3"


def bad() -> None:
    s = Shared()
    threads = [threading.Thread(target=body, args=(s,)) for body in (add_one, add_two, check)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
