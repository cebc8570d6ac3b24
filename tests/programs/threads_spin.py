"""A consumer that spins on a flag the producer sets: correct, but it starves under strict priorities."""

import threading
def main():
    state = {"ready": False, "value": 0}
    def producer():
        state["value"] = 42
        state["ready"] = True
    def consumer():
        while not state["ready"]:
            pass
        assert state["value"] == 42
    ts = [threading.Thread(target=consumer), threading.Thread(target=producer)]
    for t in ts: t.start()
    for t in ts: t.join()
