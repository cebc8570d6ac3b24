"""Targets that install signal handlers, as servers and training loops do."""

import signal
import threading

stopping = threading.Event()


def _stop(signum, frame) -> None:  # noqa: ANN001
    stopping.set()


def main() -> None:
    previous = signal.signal(signal.SIGTERM, _stop)
    assert signal.getsignal(signal.SIGTERM) is _stop
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, previous)
