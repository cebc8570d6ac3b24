"""A threaded actor: check-then-act on its stock races unless a lock guards it."""

import threading

import ray


@ray.remote(max_concurrency=2)
class Inventory:
    def __init__(self, stock):
        self.stock = stock
        self.lock = threading.Lock()

    def reserve(self):
        if self.stock > 0:
            self.stock -= 1
            return True
        return False

    def reserve_locked(self):
        with self.lock:
            if self.stock > 0:
                self.stock -= 1
                return True
            return False

    def remaining(self):
        return self.stock


def shop(method):
    inventory = Inventory.remote(1)
    granted = ray.get([getattr(inventory, method).remote() for _ in range(2)])
    remaining = ray.get(inventory.remaining.remote())
    assert granted.count(True) == 1 and remaining == 0, f"oversold: granted {granted}, {remaining} left"


def oversold():
    shop("reserve")


def guarded():
    shop("reserve_locked")
