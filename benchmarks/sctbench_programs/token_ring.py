"""CS.token_ring_bad: three threads pass a value round a ring in atomic blocks; a fourth checks they agree."""

import threading


class Ring:
    def __init__(self) -> None:
        self.atomic = threading.Lock()  # __ESBMC_atomic_begin/end
        self.x1, self.x2, self.x3 = 1, 2, 1
        self.flag1 = self.flag2 = self.flag3 = False


def first(r: Ring) -> None:
    with r.atomic:
        r.x1 = (r.x3 + 1) % 4
        r.flag1 = True


def second(r: Ring) -> None:
    with r.atomic:
        r.x2 = r.x1
        r.flag2 = True


def third(r: Ring) -> None:
    with r.atomic:
        r.x3 = r.x2
        r.flag3 = True


def check(r: Ring) -> None:
    with r.atomic:
        if r.flag1 and r.flag2 and r.flag3:
            assert r.x1 == r.x2 and r.x2 == r.x3, "BAD: the ring's values differ"


def bad() -> None:
    r = Ring()
    # As in C: main returns without joining.
    for body in (first, second, third, check):
        threading.Thread(target=body, args=(r,)).start()
