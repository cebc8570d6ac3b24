"""threading, queue and concurrent.futures programs in the shape of the CPython documentation's examples.

Each correct version checks its own results against what plain Python gives;
each ``*_bug`` variant has a bug a real run can show.
"""

import concurrent.futures
import queue
import sys
import threading
import time
import weakref


def queue_join():
    """Daemon workers take items; ``q.join()`` waits until each was marked done."""
    tasks = queue.Queue()
    results = []
    lock = threading.Lock()

    def worker():
        while True:
            item = tasks.get()
            with lock:
                results.append(item * 2)
            tasks.task_done()

    for _ in range(2):
        threading.Thread(target=worker, daemon=True).start()
    for item in range(5):
        tasks.put(item)
    tasks.join()
    assert sorted(results) == [0, 2, 4, 6, 8], results


def queue_join_bug():
    """The worker marks an item done before doing it: join may return early."""
    tasks = queue.Queue()
    results = []

    def worker():
        while True:
            item = tasks.get()
            tasks.task_done()
            results.append(item)

    threading.Thread(target=worker, daemon=True).start()
    for item in range(3):
        tasks.put(item)
    tasks.join()
    assert len(results) == 3, results


def condition_producer_consumer():
    """A consumer ``wait_for``s items a producer adds under a Condition."""
    ready = threading.Condition()
    items, got = [], []

    def consumer():
        for _ in range(3):
            with ready:
                ready.wait_for(lambda: items)
                got.append(items.pop(0))

    def producer():
        for i in range(3):
            with ready:
                items.append(i)
                ready.notify()

    threads = [threading.Thread(target=consumer), threading.Thread(target=producer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [0, 1, 2], got


def condition_if_bug():
    """``if`` instead of ``while`` around ``wait``: a consumer woken late finds the item gone."""
    ready = threading.Condition()
    items, got = [], []

    def consumer():
        with ready:
            if not items:
                ready.wait()
            got.append(items.pop(0))

    consumers = [threading.Thread(target=consumer) for _ in range(2)]
    for t in consumers:
        t.start()
    for item in (1, 2):
        with ready:
            items.append(item)
            ready.notify_all()
    for t in consumers:
        t.join()


def barriers():
    """A Barrier's action runs once all arrived, before any passes; abort breaks the waiters."""
    log = []
    gate = threading.Barrier(3, action=lambda: log.append("action"))

    def party(i):
        log.append(("arrive", i))
        gate.wait()
        log.append(("pass", i))

    threads = [threading.Thread(target=party, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert log.index("action") == 3, log

    broken = threading.Barrier(3)
    out = []

    def waiter():
        try:
            broken.wait()
            out.append("passed")
        except threading.BrokenBarrierError:
            out.append("broken")

    threads = [threading.Thread(target=waiter) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    broken.abort()
    for t in threads:
        t.join()
    assert out == ["broken", "broken"], out


def locals_and_locks():
    """threading.local per thread, RLock reentrancy, BoundedSemaphore over-release, a Semaphore's bound."""
    data = threading.local()
    seen = {}

    def own(i):
        data.x = i
        time.sleep(0.01)
        seen[i] = data.x

    threads = [threading.Thread(target=own, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {0: 0, 1: 1, 2: 2} and not hasattr(data, "x")

    reentrant = threading.RLock()
    depths = []

    def nested(n):
        with reentrant:
            depths.append(n)
            if n:
                nested(n - 1)

    threads = [threading.Thread(target=nested, args=(3,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(depths) == 8
    try:
        reentrant.release()
        raise AssertionError("released an RLock not held")
    except RuntimeError:
        pass

    bounded = threading.BoundedSemaphore(2)
    bounded.acquire()
    bounded.release()
    try:
        bounded.release()
        raise AssertionError("released a BoundedSemaphore past its value")
    except ValueError:
        pass

    slots = threading.Semaphore(2)
    guard = threading.Lock()
    active, peak = [0], [0]

    def use():
        with slots:
            with guard:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.01)
            with guard:
                active[0] -= 1

    threads = [threading.Thread(target=use) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] <= 2, peak


def excepthook():
    """A program's threading.excepthook receives its threads' uncaught exceptions."""
    seen = []
    previous = threading.excepthook
    threading.excepthook = lambda args: seen.append((type(args.exc_value).__name__, args.thread.name))
    try:
        thread = threading.Thread(target=lambda: 1 / 0, name="divider")
        thread.start()
        thread.join()
    finally:
        threading.excepthook = previous
    assert seen == [("ZeroDivisionError", "divider")], seen


def event_wait_loop():
    """``while not event.wait(0.1)``: ticks until another thread sets the event."""
    event = threading.Event()

    def setter():
        time.sleep(0.35)
        event.set()

    thread = threading.Thread(target=setter)
    thread.start()
    while not event.wait(0.1):
        pass
    thread.join()


def pool_futures():
    """ThreadPoolExecutor: as_completed, wait, map, add_done_callback, an exception in a future."""

    def square(x):
        time.sleep(0.01 * x)
        return x * x

    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        futures = {pool.submit(square, i): i for i in range(5)}
        squares = {futures[f]: f.result() for f in concurrent.futures.as_completed(futures)}
        assert squares == {i: i * i for i in range(5)}
        done, _ = concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_COMPLETED)
        assert done
        assert list(pool.map(lambda x: x + 1, range(5))) == [1, 2, 3, 4, 5]
        got = []
        lock = threading.Lock()

        def collect(future):
            with lock:
                got.append(future.result())

        callbacks = [pool.submit(pow, 2, i) for i in range(3)]
        for future in callbacks:
            future.add_done_callback(collect)
        concurrent.futures.wait(callbacks)
        failing = pool.submit(lambda: 1 / 0)
        try:
            failing.result()
            raise AssertionError("no exception")
        except ZeroDivisionError:
            pass
    assert sorted(got) == [1, 2, 4], got


def pool_cancel_and_shutdown():
    """A queued future is cancelled; shutdown(cancel_futures=True) leaves none pending."""
    started, release = threading.Event(), threading.Event()

    def block():
        started.set()
        release.wait()
        return "blocked"

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    first = pool.submit(block)
    second = pool.submit(pow, 2, 3)
    third = pool.submit(pow, 2, 4)
    started.wait()
    assert second.cancel() and second.cancelled()
    release.set()
    pool.shutdown(wait=True, cancel_futures=True)
    assert first.result() == "blocked"
    assert third.done() and (third.cancelled() or third.result() == 16)


def threads_and_queues():
    """A thread that starts threads; PriorityQueue, LifoQueue, SimpleQueue; a daemon left running."""
    out = []
    lock = threading.Lock()

    def inner(i):
        with lock:
            out.append(i)

    def outer():
        threads = [threading.Thread(target=inner, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    thread = threading.Thread(target=outer)
    thread.start()
    thread.join()
    assert sorted(out) == [0, 1]

    by_priority, last_first, simple = queue.PriorityQueue(), queue.LifoQueue(), queue.SimpleQueue()

    def produce():
        for x in (3, 1, 2):
            by_priority.put(x)
            last_first.put(x)
            simple.put(x)

    thread = threading.Thread(target=produce)
    thread.start()
    thread.join()
    taken = [[q.get() for _ in range(3)] for q in (by_priority, last_first, simple)]
    assert taken == [[1, 2, 3], [2, 1, 3], [3, 1, 2]], taken
    try:
        simple.get(timeout=0.1)
        raise AssertionError("an empty queue gave an item")
    except queue.Empty:
        pass

    never = threading.Event()

    def forever():
        while True:
            never.wait(1)

    threading.Thread(target=forever, daemon=True).start()


def finalizers():
    """weakref.finalize runs when the last reference goes, here dropped by another thread."""

    class Resource:
        pass

    closed = []
    resource = Resource()
    weakref.finalize(resource, closed.append, "closed")

    def drop():
        nonlocal resource
        resource = None

    thread = threading.Thread(target=drop)
    thread.start()
    thread.join()
    assert closed == ["closed"], closed


def process_level_calls():
    """sys.exit in a thread ends it quietly; recursion limits and deep recursion in a thread; prints."""
    out = []

    def leave():
        out.append("left")
        sys.exit(3)

    def recurse_forever(n):
        return recurse_forever(n + 1)

    def hit_the_limit():
        try:
            recurse_forever(0)
        except RecursionError:
            out.append("recursion")

    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)

    def talk(i):
        for j in range(2):
            print(f"thread {i} line {j}")

    threads = [
        threading.Thread(target=leave),
        threading.Thread(target=hit_the_limit),
        threading.Thread(target=lambda: out.append(depth(800))),
        *(threading.Thread(target=talk, args=(i,)) for i in range(3)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out, key=str) == [800, "left", "recursion"], out


def clock_spin():
    """Busy-waits on the clock, in a thread and in the main thread, also polling a flag: they end, as without dnsse."""
    done = []

    def spin():
        end = time.perf_counter_ns() + 1_000_000
        while time.perf_counter_ns() < end:
            pass
        done.append("thread")

    thread = threading.Thread(target=spin)
    thread.start()
    thread.join()
    end = time.monotonic() + 0.02
    while time.monotonic() < end:
        pass
    stop = {"now": False}
    end = time.monotonic() + 0.01
    while not stop["now"] and time.monotonic() < end:
        time.sleep(0)
    assert done == ["thread"]


def counter_bug():
    """An unlocked ``+=`` from two threads loses an update."""
    count = [0]

    def increment():
        for _ in range(2):
            count[0] += 1

    threads = [threading.Thread(target=increment) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert count[0] == 4, count
