"""Signals a program sends to itself, with a handler of its own set."""

import signal
import time


def alarm_watchdog():
    """An alarm as a watchdog: dnsse does not install the handler, so the alarm is refused, never a crash."""
    fired = []
    signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    time.sleep(0.1)
    signal.alarm(0)
