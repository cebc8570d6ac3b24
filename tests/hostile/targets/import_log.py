"""A module whose top-level code writes into the working directory."""

import threading

with open("import_log.txt", "a") as log:
    log.write("imported\n")


def main() -> None:
    lock = threading.Lock()
    with lock:
        with open("run_log.txt", "a") as log:
            log.write("ran\n")


def per_rank(rank: int, world_size: int) -> None:
    with open(f"rank_{rank}.txt", "a") as log:
        log.write("ran\n")
