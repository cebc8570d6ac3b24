"""Threaded programs checked against LTL specifications (tests/test_spec_*)."""

import threading

import dnsse


def serve_and_train():
    """The server may answer before the trainer published version 1: only some schedules."""
    model = {"version": 0}
    lock = threading.Lock()

    def trainer():
        with lock:
            model["version"] = 1
            dnsse.emit("train", version=1)

    def server():
        with lock:
            dnsse.emit("serve", version=model["version"])

    threads = [threading.Thread(target=trainer), threading.Thread(target=server)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def requests_answered(requests: int = 3):
    """Every request is answered by the worker, through a queue."""
    import queue

    inbox = queue.Queue()

    def worker():
        while True:
            item = inbox.get()
            if item is None:
                return
            dnsse.emit("ack", id=item)

    thread = threading.Thread(target=worker)
    thread.start()
    for number in range(requests):
        dnsse.emit("req", id=number)
        inbox.put(number)
    inbox.put(None)
    thread.join()


def spins():
    """Never ends: ticks forever, each tick behind a lock (a scheduling point)."""
    lock = threading.Lock()
    ticks = 0
    while True:
        with lock:
            ticks += 1
            dnsse.emit("tick", n=ticks)
