"""A target that states its own property: DNSSE_SPECS (the Python API of specifications)."""

import threading

import dnsse

DNSSE_SPECS = ["G (serve -> O train)"]


def main():
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
