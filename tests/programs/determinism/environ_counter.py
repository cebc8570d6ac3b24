"""Counts its runs in the environment: every execution must start from the same one."""

import os
import threading


def main() -> None:
    runs = int(os.environ.get("DNSSE_TEST_RUNS", "0")) + 1
    os.environ["DNSSE_TEST_RUNS"] = str(runs)
    done = threading.Event()
    threading.Thread(target=done.set).start()
    done.wait()
    assert runs == 1, f"this is run {runs}: an earlier execution leaked its environment"
