"""A campaign long enough to be interrupted, with a bug that shows up in some executions only.

With ``INTERRUPT_AT=PATH:N`` in the environment, the Nth run of the target
(counted in the file PATH) presses Ctrl-C, as at a terminal: SIGINT to every
process of its group. A test interrupts a campaign at the same execution so,
however fast the machine is. With ``INTERRUPT_WITH=TERM`` (or another signal's
name) as well, that run sends this signal to the dnsse process that started
the campaign (its parent), as ``kill PID`` would. Without them the targets do
nothing of the kind.

The workers of a Ray cluster keep the environment the cluster started with,
so there ``INTERRUPT_CONTROL=FILE`` names a JSON file that a test writes for
one campaign and removes after it: ``{"runs": PATH, "at": N, "signal": NAME,
"pid_file": PATH}``, where the pid file holds the process id of the campaign's
driver (which is not the parent of a Ray worker).
"""

import json
import os
import signal
import threading


def _interrupt_when_counted() -> None:
    control = os.environ.get("INTERRUPT_CONTROL")
    if control:
        _interrupt_as_controlled(control)
        return
    setting = os.environ.get("INTERRUPT_AT")
    if not setting:
        return
    path, _, at = setting.rpartition(":")
    other = os.environ.get("INTERRUPT_WITH")
    if other:
        _signal_when_counted(path, int(at), os.getppid(), other)
        return
    os.killpg(os.getpgrp(), signal.SIGINT * _counted(path, int(at)))


def _counted(path: str, at: int) -> bool:
    counter = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(counter, b"x")
        # An appending write lands at the end at once and leaves its descriptor just past its own byte: the
        # run's number, even when two workers count at the same moment (the file's size may be past it).
        number = os.lseek(counter, 0, os.SEEK_CUR)
    finally:
        os.close(counter)
    # No branch on the count (signal 0 sends nothing): the run that presses Ctrl-C covers what the others do.
    return number == at


def _signal_when_counted(path: str, at: int, pid: int, name: str) -> None:
    os.kill(pid, int(getattr(signal, f"SIG{name}")) * _counted(path, at))


def _interrupt_as_controlled(control: str) -> None:
    try:
        with open(control, encoding="utf-8") as file:
            settings = json.load(file)
    except FileNotFoundError:
        return  # no campaign to interrupt now
    with open(settings["pid_file"], encoding="utf-8") as file:
        pid = int(file.read())
    _signal_when_counted(settings["runs"], int(settings["at"]), pid, settings["signal"])


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
