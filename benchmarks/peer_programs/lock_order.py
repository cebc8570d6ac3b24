"""Two transfers take the two account locks in opposite orders: a lock-order (ABBA) deadlock."""

import threading


class Accounts:
    def __init__(self) -> None:
        self.checking_lock = threading.Lock()
        self.savings_lock = threading.Lock()
        self.checking = 100
        self.savings = 100


def to_savings(accounts: Accounts) -> None:
    with accounts.checking_lock:
        with accounts.savings_lock:
            accounts.checking -= 10
            accounts.savings += 10


def to_checking(accounts: Accounts) -> None:
    with accounts.savings_lock:
        with accounts.checking_lock:
            accounts.savings -= 10
            accounts.checking += 10


def setup() -> Accounts:
    return Accounts()


WORKERS = [to_savings, to_checking]


def invariant(accounts: Accounts) -> bool:
    return accounts.checking + accounts.savings == 200


def main() -> None:
    accounts = setup()
    threads = [threading.Thread(target=worker, args=(accounts,)) for worker in WORKERS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert invariant(accounts)
