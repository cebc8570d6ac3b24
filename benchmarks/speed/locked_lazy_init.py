"""Two threads lazily create a shared resource under a lock: correct, so every schedule passes."""

import threading


class Holder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.resource = None
        self.created = 0


def get(holder: Holder) -> object:
    with holder.lock:
        if holder.resource is None:
            holder.created += 1
            holder.resource = object()
    return holder.resource


def setup() -> Holder:
    return Holder()


WORKERS = [get, get]


def invariant(holder: Holder) -> bool:
    return holder.created == 1 and holder.resource is not None


def main() -> None:
    holder = setup()
    threads = [threading.Thread(target=worker, args=(holder,)) for worker in WORKERS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert invariant(holder), f"created {holder.created} times"
