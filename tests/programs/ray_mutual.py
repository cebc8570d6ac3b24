"""Two actors that call each other: synchronous ones deadlock, an async one does not."""

import ray


@ray.remote
class Ping:
    def __init__(self):
        self.acks = 0

    def start(self, pong, me):
        return ray.get(pong.pong.remote(me))

    def ack(self):
        self.acks += 1
        return self.acks


@ray.remote
class AsyncPing:
    def __init__(self):
        self.acks = 0

    async def start(self, pong, me):
        return await pong.pong.remote(me)

    async def ack(self):
        self.acks += 1
        return self.acks


@ray.remote
class Pong:
    def pong(self, ping):
        return ray.get(ping.ack.remote())



def deadlock():
    ping = Ping.remote()
    pong = Pong.remote()
    assert ray.get(ping.start.remote(pong, ping)) == 1


def no_deadlock():
    ping = AsyncPing.remote()
    pong = Pong.remote()
    assert ray.get(ping.start.remote(pong, ping)) == 1
