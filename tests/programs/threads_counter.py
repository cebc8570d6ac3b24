"""A shared counter incremented by two threads, without and with a lock."""

import threading


class Counter:
    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()

    def bump(self):
        self.count += 1

    def bump_locked(self):
        with self.lock:
            self.count += 1


def run(bump_name, increments=2):
    counter = Counter()
    bump = getattr(counter, bump_name)

    def worker():
        for _ in range(increments):
            bump()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter.count == 2 * increments, f"lost update: count is {counter.count}"


def unlocked():
    run("bump")


def locked():
    run("bump_locked")


total = 0


def bump_global():
    global total
    total += 1


def unlocked_global():
    threads = [threading.Thread(target=bump_global) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert total == 2, f"lost update: total is {total}"
