"""Agents that busy-wait for a flag another agent sets: correct, though a poller never blocks.

``attribute_flag`` polls ``flag.ready`` with ``while not ...: pass``;
``sleep_poll`` polls a dict entry with ``time.sleep(0)`` between reads.
``published_too_early`` sets its flag before the value it guards: the
poller may read the value before it is set.
"""

import threading
import time


class Flag:
    def __init__(self):
        self.ready = False
        self.value = 0


def _run(*bodies):
    threads = [threading.Thread(target=body) for body in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def attribute_flag():
    flag = Flag()

    def producer():
        flag.value = 7
        flag.ready = True

    def consumer():
        while not flag.ready:
            pass
        assert flag.value == 7

    _run(consumer, producer)


def sleep_poll():
    state = {"ready": False, "value": 0}

    def producer():
        state["value"] = 42
        state["ready"] = True

    def consumer():
        while not state["ready"]:
            time.sleep(0)
        assert state["value"] == 42

    _run(consumer, producer)


def published_too_early():
    state = {"ready": False, "value": 0}

    def producer():
        state["ready"] = True
        state["value"] = 42

    def consumer():
        while not state["ready"]:
            pass
        assert state["value"] == 42, "the consumer read the value before it was set"

    _run(consumer, producer)
