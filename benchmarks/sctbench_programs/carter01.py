"""CS.carter01_bad: two classes of readers take a shared lock on behalf of their class; they deadlock."""

import threading


class Shared:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.l = threading.Lock()
        self.a = 0
        self.b = 0


def class_a(s: Shared) -> None:
    with s.m:
        s.a += 1
        if s.a == 1:
            s.l.acquire()
    with s.m:
        s.a -= 1
        if s.a == 0:
            s.l.release()


def class_b(s: Shared) -> None:
    with s.m:
        s.b += 1
        if s.b == 1:
            s.l.acquire()
    with s.m:
        s.b -= 1
        if s.b == 0:
            s.l.release()


def nothing(s: Shared) -> None:
    pass


def bad() -> None:
    s = Shared()
    threads = [threading.Thread(target=body, args=(s,)) for body in (class_a, class_b, nothing, nothing)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
