"""Small threaded programs whose schedules can be counted: the yardsticks of dfs, pos and pct."""

import threading


class Box:
    def __init__(self):
        self.x = 0
        self.y = 0
        self.flag = False


def _run(*bodies):
    threads = [threading.Thread(target=body) for body in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def lost_update():
    """Two read-modify-write increments: one schedule class loses an update."""
    box = Box()

    def bump():
        box.x = box.x + 1

    _run(bump, bump)
    assert box.x == 2, f"lost update: x is {box.x}"


def disjoint():
    """Three threads touching different attributes: every schedule is equivalent."""
    box = Box()

    def a():
        box.x = 1

    def b():
        box.y = 2

    def c():
        box.flag = True

    _run(a, b, c)


def three_writers():
    """Three threads write and read one attribute; correct, but with many classes."""
    box = Box()

    def write(value):
        def body():
            box.x = value
            seen = box.x
            assert seen in (1, 2, 3)

        return body

    _run(write(1), write(2), write(3))


def order_violation():
    """Depth 1: the reader must not run before the writer publishes."""
    box = Box()

    def publish():
        box.flag = True

    def consume():
        assert box.flag, "consumed before publish"

    _run(publish, consume)


def atomicity_violation():
    """Depth 2: the reader sees the transient value between two writes."""
    box = Box()

    def update():
        box.x = 1
        box.x = 0

    def check():
        assert box.x == 0, "saw the transient state"

    _run(update, check)


def locked_counter():
    """Increments under a lock: correct in every schedule."""
    box = Box()
    lock = threading.Lock()

    def bump():
        with lock:
            box.x = box.x + 1

    _run(bump, bump)
    assert box.x == 2


def lock_order():
    """Two locks taken in opposite orders: a deadlock in some schedules."""
    first = threading.Lock()
    second = threading.Lock()

    def forward():
        with first:
            with second:
                pass

    def backward():
        with second:
            with first:
                pass

    _run(forward, backward)


def poll_alive():
    """Whether a thread is alive depends on how far it got."""
    box = Box()

    def work():
        box.x = 1

    worker = threading.Thread(target=work)
    worker.start()
    alive = worker.is_alive()
    worker.join()
    assert alive or box.x == 1
    assert not alive, "the worker was still running when polled"
