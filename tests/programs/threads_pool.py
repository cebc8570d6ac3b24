"""Check-then-act on a shared pool: two threads may both see the last item."""

import threading

pool = {"connection": object()}
taken = []


def take():
    if "connection" in pool:
        taken.append(pool.pop("connection"))


def main():
    threads = [threading.Thread(target=take) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(taken) == 1
