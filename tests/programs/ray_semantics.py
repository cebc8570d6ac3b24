"""Small drivers that assert Ray's semantics; each passes under every schedule Ray allows."""

import asyncio

import ray
from ray.exceptions import ActorDiedError, GetTimeoutError, RayActorError, RayTaskError
from ray.util import ActorPool


@ray.remote
def square(x):
    return x * x


@ray.remote
def fail(message):
    raise ValueError(message)


@ray.remote
def mutate(items):
    items.append("task")
    return len(items)


@ray.remote
def sum_of_squares(n):
    return sum(ray.get([square.remote(i) for i in range(n)]))


@ray.remote(num_returns=2)
def divide(a, b):
    return a // b, a % b


@ray.remote
class Log:
    def __init__(self):
        self.entries = []

    def append(self, entry):
        self.entries.append(entry)
        return len(self.entries)

    def read(self):
        return list(self.entries)


@ray.remote
def append_to(log, entry):
    ray.get(log.append.remote(entry))


@ray.remote
class Broken:
    def __init__(self):
        raise RuntimeError("no database")

    def use(self):
        return "unreachable"


@ray.remote
class Gate:
    def __init__(self):
        self.opened = asyncio.Event()

    async def wait(self):
        await self.opened.wait()
        return "open"

    async def open(self):
        self.opened.set()


def per_caller_order():
    log = Log.remote()
    for entry in range(4):
        log.append.remote(entry)
    assert ray.get(log.read.remote()) == [0, 1, 2, 3]


def call_waits_for_its_argument():
    log = Log.remote()
    log.append.remote(square.remote(3))
    log.append.remote("after")
    assert ray.get(log.read.remote()) == [9, "after"]


def two_callers():
    log = Log.remote()
    ray.get([append_to.remote(log, "a"), append_to.remote(log, "b")])
    assert ray.get(log.read.remote()) == ["a", "b"], "b ran first"


def out_of_order():
    log = Log.options(allow_out_of_order_execution=True).remote()
    log.append.remote("a")
    log.append.remote("b")
    ray.wait([log.append.remote("c")])
    assert ray.get(log.read.remote())[:2] == ["a", "b"], "b ran first"


def objects_are_copied():
    items = [1]
    ref = ray.put(items)
    items.append(2)
    assert ray.get(ref) == [1]
    got = ray.get(ref)
    got.append(3)
    assert ray.get(ref) == [1]
    assert ray.get(mutate.remote(items)) == 3 and items == [1, 2]


def tasks_and_errors():
    assert ray.get(sum_of_squares.remote(4)) == 14
    quotient, remainder = divide.remote(7, 2)
    assert ray.get([quotient, remainder]) == [3, 1]
    try:
        ray.get(fail.remote("bad input"))
        raise AssertionError("the error was not raised")
    except ValueError as error:
        assert isinstance(error, RayTaskError) and str(error.cause) == "bad input"
    try:
        ray.get(square.remote(fail.remote("upstream")))
        raise AssertionError("the failed dependency was not raised")
    except ValueError as error:
        assert "upstream" in str(error)
    try:
        square(3)
        raise AssertionError("a remote function was called directly")
    except TypeError:
        pass


def waiting():
    refs = [square.remote(i) for i in range(4)]
    ready, rest = ray.wait(refs, num_returns=2)
    assert len(ready) == 2 and len(rest) == 2 and set(ready) | set(rest) == set(refs)
    ready, rest = ray.wait(refs, num_returns=4)
    assert ready == refs and rest == []
    assert sorted(ray.get(refs)) == [0, 1, 4, 9]


def timeouts():
    gate = Gate.remote()
    opened = gate.wait.remote()
    try:
        ray.get(opened, timeout=1)
        raise AssertionError("the gate was never opened, yet get returned")
    except GetTimeoutError:
        pass
    ready, rest = ray.wait([opened], timeout=0.5)
    assert ready == [] and rest == [opened]
    gate.open.remote()
    assert ray.get(opened) == "open"


def named_actors_and_kill():
    Log.options(name="journal").remote()
    journal = ray.get_actor("journal")
    assert ray.get(journal.append.remote("x")) == 1
    try:
        Log.options(name="journal").remote()
        raise AssertionError("a second actor took the name")
    except ValueError:
        pass
    same = Log.options(name="journal", get_if_exists=True).remote()
    assert ray.get(same.read.remote()) == ["x"]
    ray.kill(journal)
    try:
        ray.get(journal.read.remote())
        raise AssertionError("a killed actor answered")
    except RayActorError:
        pass
    try:
        ray.get_actor("journal")
        raise AssertionError("a dead actor kept its name")
    except ValueError:
        pass
    try:
        ray.get(Broken.remote().use.remote())
        raise AssertionError("an actor whose constructor failed answered")
    except ActorDiedError as error:
        assert "no database" in str(error)


@ray.remote
class Doubler:
    def double(self, value):
        return 2 * value


def actor_pool():
    pool = ActorPool([Doubler.remote() for _ in range(2)])
    assert list(pool.map(lambda actor, value: actor.double.remote(value), range(5))) == [0, 2, 4, 6, 8]
    pool.submit(lambda actor, value: actor.double.remote(value), 21)
    assert pool.has_next() and pool.get_next() == 42 and not pool.has_next()
    unordered = pool.map_unordered(lambda actor, value: actor.double.remote(value), range(4))
    assert sorted(unordered) == [0, 2, 4, 6]


@ray.remote
class Splitter:
    @ray.method(num_returns=2)
    def split(self, pair):
        return pair[0], pair[1]


@ray.remote
class Attempts:
    def __init__(self):
        self.count = 0

    def next(self):
        self.count += 1
        return self.count


@ray.remote(max_retries=2, retry_exceptions=True)
def flaky(attempts):
    if ray.get(attempts.next.remote()) == 1:
        raise ConnectionError("the first attempt fails")
    return "ok"


def method_options_and_retried_exceptions():
    left, right = Splitter.remote().split.remote(("l", "r"))
    assert ray.get([left, right]) == ["l", "r"]
    assert ray.get(flaky.remote(Attempts.remote())) == "ok"


def driver_coroutine_awaits_a_ref():
    async def main():
        return await square.remote(5)

    assert asyncio.run(main()) == 25
