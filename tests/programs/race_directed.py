"""Bugs that need one agent run at one exact point among many: what race-directed search aims at.

``torn_config``: 30 updaters publish a new config in two locked steps (the
version, then its checksum); one reader that runs between an updater's two
steps sees a version without its checksum. ``half_pair``: 15 setters write
``first`` then ``second`` unlocked; a checker that reads between one setter's
two writes sees one without the other.
"""

import threading

UPDATERS = 30
SETTERS = 15


class Config:
    def __init__(self) -> None:
        self.version_lock = threading.Lock()
        self.checksum_lock = threading.Lock()
        self.version = 0
        self.checksum = 0


def update(config: Config) -> None:
    with config.version_lock:
        config.version = 7
    with config.checksum_lock:
        config.checksum = config.version * 3


def read(config: Config, seen: list) -> None:
    with config.version_lock:
        version = config.version
    with config.checksum_lock:
        checksum = config.checksum
    seen.append((version, checksum))
    assert checksum == version * 3, f"torn config: version {version} with checksum {checksum}"


def torn_config() -> list:
    config = Config()
    seen: list = []
    threads = [threading.Thread(target=update, args=(config,)) for _ in range(UPDATERS)]
    threads.append(threading.Thread(target=read, args=(config, seen)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return seen


class Pair:
    def __init__(self) -> None:
        self.first = 0
        self.second = 0


def set_both(pair: Pair) -> None:
    pair.first = 1
    pair.second = 1


def check_both(pair: Pair) -> None:
    first = pair.first
    second = pair.second
    assert first == second, f"half a pair: first {first}, second {second}"


def half_pair() -> None:
    pair = Pair()
    threads = [threading.Thread(target=set_both, args=(pair,)) for _ in range(SETTERS)]
    threads.append(threading.Thread(target=check_both, args=(pair,)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
