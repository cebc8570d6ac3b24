"""A module of another project, on sys.path: its import takes a lock, once per process."""

import threading

_lock = threading.Lock()
registry: dict[str, bool] = {}
with _lock:
    registry["ready"] = True
