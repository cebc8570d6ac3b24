"""Small threaded programs whose schedules can be counted: the yardsticks of dfs, pos and pct.

Threads get the shared object as an argument (not a closure cell), so that
only the attribute accesses are scheduling points and brute force stays small.
"""

import threading


class Box:
    def __init__(self):
        self.x = 0
        self.y = 0
        self.flag = False
        self.lock = threading.Lock()
        self.other = threading.Lock()


def _run(box, *bodies):
    # Unrolled: iterating over a list of threads would add scheduling points.
    threads = tuple(threading.Thread(target=body, args=(box,)) for body in bodies)
    if len(threads) == 3:
        threads[2].start()
    threads[0].start()
    threads[1].start()
    threads[0].join()
    threads[1].join()
    if len(threads) == 3:
        threads[2].join()


def _bump(box):
    box.x = box.x + 1


def lost_update():
    """Two read-modify-write increments: one schedule class loses an update."""
    box = Box()
    _run(box, _bump, _bump)
    assert box.x == 2, f"lost update: x is {box.x}"


def _write_x(box):
    box.x = 1


def _write_y(box):
    box.y = 2


def _write_flag(box):
    box.flag = True


def disjoint():
    """Three threads touching different attributes: every schedule is equivalent."""
    _run(Box(), _write_x, _write_y, _write_flag)


def _write_read(box):
    box.x = box.y
    box.y = 1


def write_read():
    """Two threads each read one attribute and write the other; correct, with several classes."""
    _run(Box(), _write_read, _write_read)


def _consume(box):
    assert box.flag, "consumed before publish"


def order_violation():
    """Depth 1: the reader must not run before the writer publishes."""
    _run(Box(), _write_flag, _consume)


def _transient(box):
    box.x = 1
    box.x = 0


def _check_x(box):
    assert box.x == 0, "saw the transient state"


def atomicity_violation():
    """Depth 2: the reader sees the transient value between two writes."""
    _run(Box(), _transient, _check_x)


def _bump_locked(box):
    with box.lock:
        box.x = box.x + 1


def locked_counter():
    """Increments under a lock: correct in every schedule."""
    box = Box()
    _run(box, _bump_locked, _bump_locked)
    assert box.x == 2


def _forward(box):
    with box.lock:
        with box.other:
            pass


def _backward(box):
    with box.other:
        with box.lock:
            pass


def lock_order():
    """Two locks taken in opposite orders: a deadlock in some schedules."""
    _run(Box(), _forward, _backward)


def poll_alive():
    """Whether a thread is alive depends on how far it got."""
    box = Box()
    worker = threading.Thread(target=_write_x, args=(box,))
    worker.start()
    alive = worker.is_alive()
    worker.join()
    assert not alive, "the worker was still running when polled"
