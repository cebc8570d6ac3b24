"""A failed assert whose message prints a set of the program's objects: their order is their addresses'."""

import threading


class Item:
    def __init__(self, number: int) -> None:
        self.number = number

    def __repr__(self) -> str:
        return f"Item({self.number})"


def main() -> None:
    done = set()

    def work(number: int) -> None:
        done.add(Item(number))

    threads = [threading.Thread(target=work, args=(number,)) for number in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not done, done
