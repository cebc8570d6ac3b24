"""The consumer checks for an item outside the lock, then waits: a notify sent in between is lost."""

import threading


class Mailbox:
    def __init__(self) -> None:
        self.ready = threading.Condition()
        self.items: list[int] = []
        self.received: list[int] = []


def consume(box: Mailbox) -> None:
    if not box.items:  # the bug: the check is not under the lock the wait uses
        with box.ready:
            box.ready.wait()
    box.received.append(box.items.pop())


def produce(box: Mailbox) -> None:
    with box.ready:
        box.items.append(1)
        box.ready.notify()


def setup() -> Mailbox:
    return Mailbox()


WORKERS = [consume, produce]


def invariant(box: Mailbox) -> bool:
    return box.received == [1]


def main() -> None:
    box = setup()
    threads = [threading.Thread(target=worker, args=(box,)) for worker in WORKERS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert invariant(box)
