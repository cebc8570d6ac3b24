"""A campaign long enough to be interrupted, with a bug that shows up in some executions only.

With ``INTERRUPT_AT=PATH:N`` in the environment, the Nth run of the target
(counted in the file PATH) presses Ctrl-C, as at a terminal: SIGINT to every
process of its group. A test interrupts a campaign at the same execution so,
however fast the machine is. With ``INTERRUPT_WITH=TERM`` (or another signal's
name) as well, that run sends this signal to the dnsse process that started
the campaign (its parent), as ``kill PID`` would. Without them the targets do
nothing of the kind.
"""

import os
import signal
import threading


def _interrupt_when_counted() -> None:
    setting = os.environ.get("INTERRUPT_AT")
    if not setting:
        return
    path, _, at = setting.rpartition(":")
    with open(path, "a", encoding="utf-8") as counter:
        counter.write("x")
    # No branch on the count (signal 0 sends nothing): the run that presses Ctrl-C covers what the others do.
    now = os.path.getsize(path) == int(at)
    other = os.environ.get("INTERRUPT_WITH")
    if other:
        os.kill(os.getppid(), int(getattr(signal, f"SIG{other}")) * now)
        return
    os.killpg(os.getpgrp(), signal.SIGINT * now)


def racy(rounds: int = 300) -> None:
    _interrupt_when_counted()
    lock = threading.Lock()
    counter = [0]

    def work() -> None:
        for _ in range(rounds):
            with lock:
                pass
        value = counter[0]
        counter[0] = value + 1

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter[0] == 2, f"lost update: {counter[0]}"


def locked(rounds: int = 2, workers: int = 3) -> None:
    """Correct: dfs verifies it, in enough executions to be interrupted on the way."""
    _interrupt_when_counted()
    lock = threading.Lock()
    counter = [0]

    def work() -> None:
        for _ in range(rounds):
            with lock:
                counter[0] += 1

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter[0] == workers * rounds
