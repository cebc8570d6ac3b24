"""Two threads racing on a counter; the test rewrites this file to change the program."""

import threading

counter = {"value": 0}


def bump():
    value = counter["value"]
    counter["value"] = value + 1


def main():
    threads = [threading.Thread(target=bump) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter["value"] == 2, f"lost update: counter is {counter['value']}"
