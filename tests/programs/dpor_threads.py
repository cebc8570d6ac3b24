"""Small threaded programs for the soundness and the reduction of dfs.

The first four hide their race in accesses that are not plain attribute
loads and stores: ``in`` on a dict, iteration, a method called through a
local alias, ``setattr``. The last two are correct and measure how close
the reduction comes to one execution per class.
"""

import copy
import threading


def _start_all(target, *arguments):
    threads = [threading.Thread(target=target, args=args) for args in arguments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _load(cache, loads):
    if "model" not in cache:
        loads.append(1)
        cache["model"] = object()


def check_then_act():
    """Two threads load the model when the cache misses: both may miss."""
    cache, loads = {}, []
    _start_all(_load, (cache, loads), (cache, loads))
    assert len(loads) == 1, f"the model was loaded {len(loads)} times"


def _scan_or_insert(table, insert):
    if insert:
        table["b"] = 2
    else:
        for key in table:
            pass


def iterate_while_insert():
    """One thread iterates a dict while another inserts into it."""
    table = {"a": 1, "c": 3}
    _start_all(_scan_or_insert, (table, False), (table, True))


class Shared:
    def __init__(self):
        self.items = []
        self.ready = False


def _append(shared):
    items = shared.items
    before = len(items)
    items.append(1)
    assert len(items) == before + 1, "another append came in between"


def alias_append():
    """Each thread appends through a local alias, then checks the length it expects."""
    shared = Shared()
    _start_all(_append, (shared,), (shared,))


def _flag(shared, publish):
    if publish:
        setattr(shared, "ready", True)
    else:
        assert shared.ready, "consumed before publish"


def setattr_flag():
    """A flag published with setattr and read as an attribute: the reader may run first."""
    shared = Shared()
    _start_all(_flag, (shared, True), (shared, False))


def _move(first, second, source, target, amount):
    with first.lock:
        with second.lock:
            source.balance -= amount
            target.balance += amount


class Account:
    def __init__(self, balance):
        self.balance = balance
        self.lock = threading.Lock()


def transfer():
    """Two transfers between two accounts, locks taken in one global order: correct."""
    a, b = Account(10), Account(10)
    _start_all(_move, (a, b, a, b, 3), (a, b, b, a, 4))
    assert a.balance + b.balance == 20


class Lazy:
    def __init__(self):
        self.lock = threading.Lock()
        self.value = None
        self.made = 0


def _get(lazy):
    with lazy.lock:
        if lazy.value is None:
            lazy.made += 1
            lazy.value = object()
    return lazy.value


def lazy_init():
    """Two threads initialise a value under a lock, once: correct."""
    lazy = Lazy()
    _start_all(_get, (lazy,), (lazy,))
    assert lazy.made == 1


def library_reads_shared_object():
    """A thread hands a program object to library code that dnsse does not trace: no promise possible."""
    shared = Shared()
    reader = threading.Thread(target=copy.deepcopy, args=(shared,))
    reader.start()
    shared.items.append(1)
    reader.join()
