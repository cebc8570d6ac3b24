"""A consumer waits on a condition without a predicate: a notify sent first is lost."""

import threading

ready = threading.Condition()
items = []


def consumer():
    with ready:
        ready.wait()
        items.pop()


def producer():
    with ready:
        items.append(1)
        ready.notify()


def main():
    threads = [threading.Thread(target=consumer), threading.Thread(target=producer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
