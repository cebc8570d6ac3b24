"""CS.queue_bad: an enqueuer and a dequeuer of a 20-slot queue take turns through two flags.

The C source of the bad variant was not at hand: this follows the structure
of ``queue_ok.c`` (the same queue, lock and flags) with the bad variant's
shape as other ports of SCTBench give it: SIZE 20, the first stored element
recorded without being enqueued, so the first element dequeued is not the
first one stored. ``ok`` is ``queue_ok.c`` (SIZE 40, every element enqueued
and dequeued in one locked block each).
"""

import threading

EMPTY = -1


class Queue:
    def __init__(self, size: int) -> None:
        self.size = size
        self.m = threading.Lock()
        self.element = [0] * (size + 1)
        self.stored = [0] * size
        self.head = 0
        self.tail = 0
        self.amount = 0
        self.enqueue_flag = True
        self.dequeue_flag = False

    def empty(self) -> int:
        return EMPTY if self.head == self.tail else 0

    def enqueue(self, x: int) -> None:
        self.element[self.tail] = x
        self.amount += 1
        if self.tail == self.size:
            self.tail = 1
        else:
            self.tail += 1

    def dequeue(self) -> int:
        x = self.element[self.head]
        self.amount -= 1
        if self.head == self.size:
            self.head = 1
        else:
            self.head += 1
        return x


def enqueuer_bad(q: Queue) -> None:
    value = 0
    with q.m:
        q.stored[0] = value
    for i in range(q.size - 1):
        with q.m:
            if q.enqueue_flag:
                value += 1
                q.enqueue(value)
                q.stored[i + 1] = value
                q.enqueue_flag = False
                q.dequeue_flag = True


def dequeuer_bad(q: Queue) -> None:
    for i in range(q.size):
        with q.m:
            if q.dequeue_flag:
                assert q.dequeue() == q.stored[i], "BAD: the element dequeued is not the one stored"
                q.dequeue_flag = False
                q.enqueue_flag = True


def enqueuer_ok(q: Queue) -> None:
    value = 0
    with q.m:
        if q.enqueue_flag:
            for i in range(q.size):
                value += 1
                q.enqueue(value)
                q.stored[i] = value
            q.enqueue_flag = False
            q.dequeue_flag = True


def dequeuer_ok(q: Queue) -> None:
    with q.m:
        if q.dequeue_flag:
            for i in range(q.size):
                if q.empty() != EMPTY:
                    assert q.dequeue() == q.stored[i]
            q.dequeue_flag = False
            q.enqueue_flag = True


def _run(size: int, enqueuer, dequeuer) -> None:  # type: ignore[no-untyped-def]
    q = Queue(size)
    assert q.empty() == EMPTY
    threads = [threading.Thread(target=enqueuer, args=(q,)), threading.Thread(target=dequeuer, args=(q,))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def bad() -> None:
    _run(20, enqueuer_bad, dequeuer_bad)


def ok() -> None:
    _run(40, enqueuer_ok, dequeuer_ok)
