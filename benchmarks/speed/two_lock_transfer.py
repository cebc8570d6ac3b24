"""Two threads move money between two accounts in opposite directions, taking both locks in one order."""

import threading


class Account:
    def __init__(self, balance: int) -> None:
        self.lock = threading.Lock()
        self.balance = balance


class Bank:
    def __init__(self) -> None:
        self.a = Account(100)
        self.b = Account(100)


def transfer(bank: Bank, source: Account, target: Account, amount: int) -> None:
    # Always bank.a before bank.b, whichever way the money goes: no lock-order deadlock.
    with bank.a.lock:
        with bank.b.lock:
            if source.balance >= amount:
                source.balance -= amount
                target.balance += amount


def a_to_b(bank: Bank) -> None:
    transfer(bank, bank.a, bank.b, 30)


def b_to_a(bank: Bank) -> None:
    transfer(bank, bank.b, bank.a, 50)


def setup() -> Bank:
    return Bank()


WORKERS = [a_to_b, b_to_a]


def invariant(bank: Bank) -> bool:
    return bank.a.balance + bank.b.balance == 200


def main() -> None:
    bank = setup()
    threads = [threading.Thread(target=worker, args=(bank,)) for worker in WORKERS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert invariant(bank), f"balances {bank.a.balance} + {bank.b.balance} != 200"
