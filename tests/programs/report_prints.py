"""A lost update between two threads that both print as they work (output capture, stories)."""

import sys
import threading


class Counter:
    def __init__(self):
        self.count = 0


def main():
    counter = Counter()

    def worker(name):
        print(f"hello from {name}")
        seen = counter.count
        counter.count = seen + 1
        print(f"{name} wrote {seen + 1}", file=sys.stderr)

    threads = [threading.Thread(target=worker, args=(f"worker-{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(f"<b>final count</b> {counter.count}")
    print("\x1b[1mterminal colours & a bell\x07\x1b[0m </script><script>alert(1)</script>")
    assert counter.count == 2, f"lost update: count is {counter.count}"


def correct():
    print("a correct run prints this")
