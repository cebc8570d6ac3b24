"""A lost update between two threads, copied into a project of its own by tests that move or rerun it."""

import threading


def main():
    box = [0]

    def work():
        value = box[0]
        box[0] = value + 1

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert box[0] == 2, f"lost update: {box[0]}"


if __name__ == "__main__":
    main()
