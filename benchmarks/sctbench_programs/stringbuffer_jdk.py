"""CS.stringbuffer_jdk1.4: JDK 1.4's StringBuffer.append(StringBuffer) reads the other's length, then its
characters, in two locked steps; another thread erases the other buffer in between."""

import threading


class StringBuffer:
    def __init__(self, text: str = "") -> None:
        self.lock = threading.Lock()
        self.value = [""] * (len(text) + 16)
        self.count = 0
        if text:
            self.append_chars(list(text))

    def append_chars(self, chars: list) -> "StringBuffer":
        with self.lock:
            new_count = self.count + len(chars)
            if new_count > len(self.value):
                self._expand(new_count)
            self.value[self.count:new_count] = chars
            self.count = new_count
        return self

    def append(self, other: "StringBuffer") -> "StringBuffer":
        with self.lock:
            length = other.length()
            new_count = self.count + length
            if new_count > len(self.value):
                self._expand(new_count)
            other.get_chars(0, length, self.value, self.count)
            self.count = new_count
        return self

    def erase(self, start: int, end: int) -> "StringBuffer":
        with self.lock:
            assert start >= 0
            end = min(end, self.count)
            assert start <= end
            length = end - start
            if length > 0:
                self.value[start:end] = [""] * length
                self.count -= length
        return self

    def length(self) -> int:
        with self.lock:
            return self.count

    def get_chars(self, begin: int, end: int, destination: list, at: int) -> None:
        with self.lock:
            assert begin >= 0
            assert 0 <= end <= self.count, "BAD: the characters asked for are no longer there"
            assert begin <= end
            destination[at:at + end - begin] = self.value[begin:end]

    def _expand(self, minimum: int) -> None:
        capacity = max((len(self.value) + 1) * 2, minimum)
        self.value = self.value[: self.count] + [""] * (capacity - self.count)


def bad() -> None:
    shared = StringBuffer("abc")

    def erase_and_refill() -> None:
        shared.erase(0, 3)
        shared.append_chars(list("abc"))

    other = threading.Thread(target=erase_and_refill)
    other.start()
    StringBuffer().append(shared)
    other.join()
