"""Threads programs whose verdict depends on time: what real runs show, with and without sleeps and timeouts.

Each correct program passes in every real run (run plainly by the tests);
each buggy one fails in some or all.
"""

import queue
import threading
import time


def timeout_on_an_item_put_at_once():
    items = queue.Queue()
    producer = threading.Thread(target=lambda: items.put("job"))
    producer.start()
    assert items.get(timeout=2.0) == "job"
    producer.join()


def a_sleep_orders_two_threads():
    appended = []

    def worker():
        time.sleep(0.2)
        appended.append(1)

    thread = threading.Thread(target=worker)
    thread.start()
    time.sleep(2)
    assert appended == [1]
    thread.join()


def a_spinner_stopped_after_a_sleep():
    stop = threading.Event()
    rounds = [0]

    def spin():
        while not stop.is_set():
            rounds[0] += 1

    thread = threading.Thread(target=spin)
    thread.start()
    time.sleep(0.05)
    stop.set()
    thread.join()


def a_producer_slower_than_the_timeout():
    """Always fails: the producer sleeps 5 s before it puts, the consumer waits 2 s."""
    items = queue.Queue()

    def producer():
        time.sleep(5)
        items.put("job")

    thread = threading.Thread(target=producer)
    thread.start()
    items.get(timeout=2.0)
    thread.join()


def a_timeout_shorter_than_the_delay_bound():
    """Fails only where the producer is stalled past 0.05 s: explored both ways under the default bound."""
    items = queue.Queue()
    producer = threading.Thread(target=lambda: items.put("job"))
    producer.start()
    assert items.get(timeout=0.05) == "job"
    producer.join()


def a_try_lock_livelock():
    """A thread spins on a try-lock whose holder waits for that thread's event: a real livelock."""
    lock = threading.Lock()
    done = threading.Event()

    def spinner():
        while not lock.acquire(blocking=False):
            pass
        done.set()
        lock.release()

    lock.acquire()
    thread = threading.Thread(target=spinner)
    thread.start()
    done.wait()
    lock.release()
    thread.join()


def a_spinner_that_runs_first():
    """The spinner waits for a flag the main thread sets after starting it: any fair schedule ends."""
    flag = {"set": False}

    def spin():
        while not flag["set"]:
            pass

    thread = threading.Thread(target=spin)
    thread.start()
    flag["set"] = True
    thread.join()


def dates_follow_the_clock():
    """datetime.now() and date.today() read the same clock as time.sleep: 0.3 s pass across the sleep."""
    import datetime

    before = datetime.datetime.now()
    time.sleep(0.3)
    after = datetime.datetime.now()
    assert 0.3 <= (after - before).total_seconds() < 5, after - before
    assert isinstance(after, datetime.datetime) and isinstance(datetime.datetime(2020, 1, 1), datetime.date)
    assert datetime.date.today() == after.date()
