"""A method retried after its actor crashed runs twice: fine when idempotent, a bug when not."""

import ray


@ray.remote
class Bank:
    def __init__(self):
        self.balance = 0
        self.seen = set()

    def deposit(self, amount):
        self.balance += amount

    def deposit_once(self, amount, request):
        if request not in self.seen:
            self.seen.add(request)
            self.balance += amount

    def total(self):
        return self.balance


@ray.remote(max_restarts=1, max_task_retries=1)
class Payer:
    def __init__(self, bank):
        self.bank = bank

    def pay(self, amount):
        ray.get(self.bank.deposit.remote(amount))
        return "paid"

    def pay_once(self, amount, request):
        ray.get(self.bank.deposit_once.remote(amount, request))
        return "paid"


@ray.remote(max_retries=1)
def pay_task(bank, amount):
    ray.get(bank.deposit.remote(amount))


def double_payment():
    bank = Bank.remote()
    payer = Payer.remote(bank)
    assert ray.get(payer.pay.remote(10)) == "paid"
    total = ray.get(bank.total.remote())
    assert total == 10, f"paid {total}, expected 10"


def idempotent_payment():
    bank = Bank.remote()
    payer = Payer.remote(bank)
    assert ray.get(payer.pay_once.remote(10, "request-1")) == "paid"
    total = ray.get(bank.total.remote())
    assert total == 10, f"paid {total}, expected 10"


def double_payment_by_task():
    bank = Bank.remote()
    ray.get(pay_task.remote(bank, 10))
    total = ray.get(bank.total.remote())
    assert total == 10, f"paid {total}, expected 10"


@ray.remote(max_restarts=1, max_task_retries=1)
class Accumulator:
    def __init__(self):
        self.values = []

    def add(self, value):
        self.values.append(value)
        return len(self.values)


def restart_loses_state():
    accumulator = Accumulator.remote()
    ray.get(accumulator.add.remote(1))
    count = ray.get(accumulator.add.remote(2))
    assert count == 2, f"state lost: {count} values after two adds"
