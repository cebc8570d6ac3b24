"""Loads that cannot race, next to one that can."""

import math
import threading


class Box:
    def __init__(self):
        self.lock = threading.Lock()
        self.value = 0

    def grow(self):
        with self.lock:
            self.value += math.floor(math.pi)


def main():
    box = Box()
    box.grow()
    assert box.value == 3
