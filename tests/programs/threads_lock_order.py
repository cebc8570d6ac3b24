"""Two threads take two locks in opposite orders: a lock-order deadlock."""

import threading

first = threading.Lock()
second = threading.Lock()


def forward():
    with first:
        with second:
            pass


def backward():
    with second:
        with first:
            pass


def main():
    threads = [threading.Thread(target=forward), threading.Thread(target=backward)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
