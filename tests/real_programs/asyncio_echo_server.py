"""asyncio TCP servers as the CPython documentation writes them, served and used in one program.

``echo`` is the documentation's echo server and client (``start_server``,
``open_connection``, ``read(100)``, ``drain``, ``wait_closed``) with two
clients at once: correct. ``tally`` is a counter server whose handler reads
the total, tells the client it is ready, awaits the client's amount, and
stores the sum, under an ``asyncio.Lock``: correct. ``tally_racy`` is the same without the
lock: two handlers interleave across the ``await`` and one update is lost.
``refused`` connects to a port nothing serves.
"""

import asyncio

MESSAGES = ("Hello World!", "Goodbye World!")


async def handle_echo(reader, writer):
    data = await reader.read(100)
    message = data.decode()
    addr = writer.get_extra_info("peername")
    print(f"Received {message!r} from {addr[0]!r}")

    print(f"Send: {message!r}")
    writer.write(data)
    await writer.drain()

    print("Close the connection")
    writer.close()
    await writer.wait_closed()


async def tcp_echo_client(message, port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    writer.write(message.encode())
    await writer.drain()

    data = await reader.read(100)

    writer.close()
    await writer.wait_closed()
    return data.decode()


async def serve_echo():
    server = await asyncio.start_server(handle_echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        replies = await asyncio.gather(*(tcp_echo_client(message, port) for message in MESSAGES))
    return replies, server.is_serving()


def echo():
    replies, serving = asyncio.run(serve_echo())
    assert replies == list(MESSAGES), replies
    assert not serving
    print("replies", replies)
    return replies


class Tally:
    def __init__(self, locked):
        self.total = 0
        self.lock = asyncio.Lock() if locked else None

    async def handle(self, reader, writer):
        await reader.readline()  # "add"
        if self.lock is None:
            await self.update(reader, writer)
        else:
            async with self.lock:
                await self.update(reader, writer)
        writer.write(f"{self.total}\n".encode())
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    async def update(self, reader, writer):
        total = self.total
        writer.write(b"ready\n")
        amount = int(await reader.readline())
        self.total = total + amount


async def add(port, amount):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"add\n")
    await writer.drain()
    assert await reader.readline() == b"ready\n"
    writer.write(f"{amount}\n".encode())
    await writer.drain()
    answer = int(await reader.readline())
    writer.close()
    await writer.wait_closed()
    return answer


async def serve_tally(locked):
    tally = Tally(locked)
    server = await asyncio.start_server(tally.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        await asyncio.gather(add(port, 1), add(port, 10))
    return tally.total


def tally():
    total = asyncio.run(serve_tally(locked=True))
    assert total == 11, f"lost update: total {total}"
    return total


def tally_racy():
    total = asyncio.run(serve_tally(locked=False))
    assert total == 11, f"lost update: total {total}"
    return total


async def connect_unserved():
    server = await asyncio.start_server(handle_echo, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    try:
        await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError as error:
        return type(error).__name__, error.errno
    return "connected", None


def refused():
    outcome = asyncio.run(connect_unserved())
    print("outcome", outcome)
    return outcome
