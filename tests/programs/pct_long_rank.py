"""A long-running agent (600 iterations before its racy part) next to a short one.

``worker`` loops 600 times over shared state (two scheduling points per
iteration, and it writes every time: it makes progress, it does not spin),
then publishes. ``reader`` runs once.

- ``late_reader`` (depth 1): the assertion fails when the reader runs after
  the worker published, i.e. when the worker has the higher priority and
  keeps it to the end.
- ``torn_read`` (depth 2): the worker sets ``a`` before its loop and ``b``
  after it; the reader fails when it reads ``a`` set and ``b`` not yet set,
  which needs the worker first and one priority change inside its loop.
"""

import threading

ITERATIONS = 600


class Shared:
    def __init__(self):
        self.progress = 0
        self.result = None
        self.a = 0
        self.b = 0


def _run(*bodies):
    threads = [threading.Thread(target=body) for body in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def late_reader():
    shared = Shared()

    def worker():
        for _ in range(ITERATIONS):
            shared.progress = shared.progress + 1
        shared.result = "done"

    def reader():
        assert shared.result is None, "the reader ran after the worker published"

    _run(worker, reader)


def torn_read():
    shared = Shared()

    def worker():
        shared.a = 1
        for _ in range(ITERATIONS):
            shared.progress = shared.progress + 1
        shared.b = 1

    def reader():
        a = shared.a
        b = shared.b
        assert not (a == 1 and b == 0), "the reader saw a set and b not yet set"

    _run(worker, reader)
