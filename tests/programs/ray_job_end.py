"""When the driver returns, the job ends: workers and their threads are stopped, not waited for."""

import threading

import ray


@ray.remote
class Listener:
    def __init__(self):
        self.stopped = threading.Event()
        threading.Thread(target=self.stopped.wait, daemon=False).start()

    def ping(self):
        return "pong"


@ray.remote
def wait_for(listener):
    while True:
        ray.get(listener.ping.remote())


def main():
    listener = Listener.remote()
    wait_for.remote(listener)
    assert ray.get(listener.ping.remote()) == "pong"
