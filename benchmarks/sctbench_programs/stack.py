"""CS.stack: a pusher and a popper of 10 items; the bad popper pops on a flag, not on the stack's size."""

import threading

SIZE = 10
OVERFLOW = -1
UNDERFLOW = -2


class Stack:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.top = 0
        self.arr = [0] * SIZE
        self.flag = False

    def push(self, x: int) -> int:
        if self.top == SIZE:
            return OVERFLOW
        self.arr[self.top] = x
        self.top += 1
        return 0

    def pop(self) -> int:
        if self.top == 0:
            return UNDERFLOW
        self.top -= 1
        return self.arr[self.top]


def pusher(s: Stack, set_flag: bool) -> None:
    for i in range(SIZE):
        with s.m:
            assert s.push(i) != OVERFLOW
            if set_flag:
                s.flag = True


def popper_bad(s: Stack) -> None:
    for _ in range(SIZE):
        with s.m:
            if s.flag:
                assert s.pop() != UNDERFLOW, "BAD: popped an empty stack"


def popper_ok(s: Stack) -> None:
    for _ in range(SIZE):
        with s.m:
            if s.top > 0:
                s.pop()


def _run(set_flag: bool, popper) -> None:  # type: ignore[no-untyped-def]
    s = Stack()
    threads = [threading.Thread(target=pusher, args=(s, set_flag)), threading.Thread(target=popper, args=(s,))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def bad() -> None:
    _run(True, popper_bad)


def ok() -> None:
    _run(False, popper_ok)
