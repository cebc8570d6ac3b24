"""CS.account_bad: a checker that asserts the wrong balance once deposit and withdrawal are done."""

import threading


class Bank:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.x, self.y, self.z = 1, 2, 4
        self.balance = self.x
        self.deposit_done = False
        self.withdraw_done = False


def deposit(bank: Bank) -> None:
    with bank.m:
        bank.balance = bank.balance + bank.y
        bank.deposit_done = True


def withdraw(bank: Bank) -> None:
    with bank.m:
        bank.balance = bank.balance - bank.z
        bank.withdraw_done = True


def check_result(bank: Bank) -> None:
    with bank.m:
        if bank.deposit_done and bank.withdraw_done:
            assert bank.balance == (bank.x - bank.y) - bank.z, "BAD: the balance is not (x - y) - z"


def bad() -> None:
    bank = Bank()
    # As in C: the checker first, and main returns without joining (the threads still run to their end).
    for body in (check_result, deposit, withdraw):
        threading.Thread(target=body, args=(bank,)).start()
