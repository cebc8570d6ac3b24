"""CS.circular_buffer_bad: a sender and a receiver of N = 7 items over a 10-slot log buffer."""

import threading

BUFFER_MAX = 10
N = 7
ERROR = -1


class Log:
    def __init__(self, size: int) -> None:
        self.m = threading.Lock()
        self.buffer = [0] * BUFFER_MAX
        self.buffer_size = size
        self.first = 0
        self.next = 0
        self.send = True
        self.receive = False

    def remove(self) -> int:
        assert self.first >= 0
        if self.next > 0 and self.first < self.buffer_size:
            self.first += 1
            return self.buffer[self.first - 1]
        return ERROR

    def insert(self, b: int) -> int:
        if self.next < self.buffer_size and self.buffer_size > 0:
            self.buffer[self.next] = b
            self.next = (self.next + 1) % self.buffer_size
            assert self.next < self.buffer_size
        else:
            return ERROR
        return b


def sender(log: Log) -> None:
    for i in range(N):
        with log.m:
            if log.send:
                log.insert(i)
                log.send = False
                log.receive = True


def receiver(log: Log) -> None:
    for i in range(N):
        with log.m:
            if log.receive:
                assert log.remove() == i, "BAD: the element removed is not the i-th"
                log.receive = False
                log.send = True


def bad() -> None:
    log = Log(10)
    threads = [threading.Thread(target=sender, args=(log,)), threading.Thread(target=receiver, args=(log,))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
