"""A threaded script: workers add to a shared total, under a lock unless ``--no-lock``."""

import argparse
import threading

total = 0
lock = threading.Lock()


def work(times: int, locked: bool) -> None:
    global total
    for _ in range(times):
        if locked:
            with lock:
                total += 1
        else:
            value = total
            total = value + 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-lock", action="store_true")
    args = parser.parse_args()
    threads = [threading.Thread(target=work, args=(2, not args.no_lock)) for _ in range(args.workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert total == 2 * args.workers, f"lost updates: {total}"


if __name__ == "__main__":
    main()
