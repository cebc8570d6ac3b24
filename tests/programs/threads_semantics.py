"""Each function asserts what Python's threading documents; all must pass under control."""

import threading
import time


def event():
    flag = threading.Event()
    seen = []

    def waiter():
        seen.append(flag.wait())

    t = threading.Thread(target=waiter)
    t.start()
    assert not flag.is_set()
    assert flag.wait(timeout=0.5) is False
    flag.set()
    t.join()
    assert seen == [True]
    flag.clear()
    assert not flag.is_set()


def semaphore():
    sem = threading.Semaphore(2)
    assert sem.acquire()
    assert sem.acquire()
    assert sem.acquire(blocking=False) is False
    assert sem.acquire(timeout=0.1) is False
    sem.release(2)
    inside = []
    peak = []

    def worker():
        with sem:
            inside.append(1)
            peak.append(len(inside))
            inside.pop()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(peak) <= 2
    bounded = threading.BoundedSemaphore(1)
    try:
        bounded.release()
    except ValueError as error:
        assert str(error) == "Semaphore released too many times"
    else:
        raise AssertionError("over-release of a BoundedSemaphore did not raise")


def barrier():
    actions = []
    gate = threading.Barrier(3, action=lambda: actions.append("tripped"))
    indices = []

    def party():
        indices.append(gate.wait())

    threads = [threading.Thread(target=party) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(indices) == [0, 1, 2]
    assert actions == ["tripped"]
    assert gate.n_waiting == 0 and not gate.broken


def barrier_abort():
    gate = threading.Barrier(2)
    outcomes = []

    def party():
        try:
            gate.wait()
            outcomes.append("passed")
        except threading.BrokenBarrierError:
            outcomes.append("broken")

    t = threading.Thread(target=party)
    t.start()
    while gate.n_waiting == 0 and t.is_alive():
        time.sleep(0.01)
    gate.abort()
    t.join()
    assert outcomes == ["broken"] and gate.broken
    try:
        gate.wait()
    except threading.BrokenBarrierError:
        pass
    else:
        raise AssertionError("wait on a broken barrier did not raise")


def barrier_timeout():
    gate = threading.Barrier(2, timeout=1.0)
    try:
        gate.wait()
    except threading.BrokenBarrierError:
        assert gate.broken
    else:
        raise AssertionError("a lone party passed a barrier of two")


def rlock():
    lock = threading.RLock()
    with lock:
        with lock:
            assert lock._is_owned()
            # What multiprocessing's resource tracker asks of its module-level RLock.
            assert lock._recursion_count() == 2
    assert lock._recursion_count() == 0
    try:
        lock.release()
    except RuntimeError as error:
        assert str(error) == "cannot release un-acquired lock"
    else:
        raise AssertionError("releasing an un-acquired RLock did not raise")
    held = threading.Event()
    done = threading.Event()
    results = []

    def owner():
        with lock:
            held.set()
            done.wait()

    t = threading.Thread(target=owner)
    t.start()
    held.wait()
    results.append(lock._recursion_count())
    results.append(lock.acquire(blocking=False))
    try:
        lock.release()
    except RuntimeError:
        results.append("refused")
    done.set()
    t.join()
    assert results == [0, False, "refused"]


def lock_errors():
    lock = threading.Lock()
    try:
        lock.release()
    except RuntimeError as error:
        assert str(error) == "release unlocked lock"
    else:
        raise AssertionError("releasing an unlocked Lock did not raise")
    assert lock.acquire(timeout=0.5)
    assert lock.locked()
    assert lock.acquire(timeout=0.5) is False
    lock.release()


def condition_wait_for():
    cond = threading.Condition()
    box = []

    def fill():
        with cond:
            box.append(1)
            cond.notify_all()

    t = threading.Thread(target=fill)
    t.start()
    with cond:
        # The filler may be slower than the timeout: wait_for then returns the false predicate.
        filled = cond.wait_for(lambda: box, timeout=10)
        assert bool(filled) == bool(box)
    t.join()
    with cond:
        assert cond.wait_for(lambda: len(box) > 1, timeout=0.5) is False


def current():
    names = []

    def worker():
        names.append(threading.current_thread().name)
        names.append(threading.get_ident() == threading.current_thread().ident)

    t = threading.Thread(target=worker, name="w")
    t.start()
    t.join()
    assert names == ["w", True]
    assert threading.current_thread() is threading.main_thread()
    assert threading.current_thread().name == "MainThread"
    assert not t.is_alive()


def timer():
    fired = []
    t = threading.Timer(5.0, fired.append, args=("late",))
    t.start()
    t.join()
    cancelled = threading.Timer(5.0, fired.append, args=("never",))
    cancelled.start()
    cancelled.cancel()
    cancelled.join()
    # A cancel that comes after the interval passed is too late, as in real runs.
    assert fired in (["late"], ["late", "never"])


class Worker(threading.Thread):
    def __init__(self):
        super().__init__(name="subclassed")
        self.result = None

    def run(self):
        self.result = self.name


def subclass():
    w = Worker()
    w.start()
    w.join()
    assert w.result == "subclassed"
