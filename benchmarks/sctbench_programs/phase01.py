"""CS.phase01_bad: each of two threads takes lock x twice without releasing it: a deadlock."""

import threading


class Shared:
    def __init__(self) -> None:
        self.x = threading.Lock()
        self.y = threading.Lock()


def body(s: Shared) -> None:
    s.x.acquire()
    s.x.release()
    s.x.acquire()
    s.y.acquire()
    s.y.release()
    s.y.acquire()
    s.y.release()


def bad() -> None:
    s = Shared()
    threads = [threading.Thread(target=body, args=(s,)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
