"""A correct producer/consumer pipeline over queue.Queue."""

import queue
import threading

DONE = None


def producer(q, count):
    for i in range(count):
        q.put(i)
    q.put(DONE)


def consumer(q, out):
    while True:
        item = q.get()
        if item is DONE:
            q.task_done()
            return
        out.append(item * item)
        q.task_done()


def main(count: int = 3):
    q = queue.Queue(maxsize=2)
    out = []
    threads = [threading.Thread(target=producer, args=(q, count)), threading.Thread(target=consumer, args=(q, out))]
    for t in threads:
        t.start()
    q.join()
    for t in threads:
        t.join()
    assert out == [i * i for i in range(count)], out


def timed_get():
    q = queue.Queue()
    try:
        q.get(timeout=5)
    except queue.Empty:
        return
    raise AssertionError("get on an empty queue returned")


def square(x):
    return x * x


def pool():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as executor:
        assert list(executor.map(square, range(4))) == [0, 1, 4, 9]
