"""Signals a program sends to itself, with a handler of its own set."""

import signal
import threading
import time


def alarm_watchdog():
    """An alarm as a watchdog: dnsse does not install the handler, so the alarm is refused, never a crash."""
    fired = []
    signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    time.sleep(0.1)
    signal.alarm(0)


def handler_in_main():
    """A handler set by the main thread is accepted."""
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: None)
    signal.signal(signal.SIGUSR1, previous)


def handler_in_a_thread_bug():
    """signal.signal from a worker thread: Python raises ValueError there."""
    worker = threading.Thread(target=signal.signal, args=(signal.SIGUSR1, lambda signum, frame: None))
    worker.start()
    worker.join()
