"""Fails with every random value it drew, so that two runs can be compared by their messages."""

import os
import random
import secrets
import threading
import uuid

import numpy


def draws() -> list:
    return [
        random.random(),
        random.Random().random(),
        uuid.uuid4().hex,
        os.urandom(4).hex(),
        secrets.token_hex(4),
        random.SystemRandom().random(),
        int(numpy.random.default_rng().integers(1 << 30)),
        float(numpy.random.rand()),
    ]


def main() -> None:
    seen = []
    worker = threading.Thread(target=lambda: seen.append(draws()))
    worker.start()
    seen.append(draws())
    worker.join()
    raise AssertionError(repr(seen))
