"""A module of the program that keeps a process-wide cache, as model registries and memo tables do."""

STORE = {}


def put(key, value):
    STORE[key] = value


def lookup(key):
    return STORE[key]
