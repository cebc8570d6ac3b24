"""asyncio servers and connections on 127.0.0.1 and Unix sockets: each function prints what it saw.

The tests run every function under plain asyncio (real sockets) and under
dnsse, and compare the printed lines.
"""

import asyncio
import os
import sys
import tempfile


class Collect(asyncio.Protocol):
    """A protocol that records its callbacks in order."""

    def __init__(self, log, name):
        self.log = log
        self.name = name
        self.done = asyncio.get_running_loop().create_future()

    def connection_made(self, transport):
        self.transport = transport
        self.log.append(f"{self.name} made")

    def data_received(self, data):
        self.log.append(f"{self.name} data {data!r}")
        if self.name == "server":
            self.transport.write(data.upper())
            self.transport.write_eof()

    def eof_received(self):
        self.log.append(f"{self.name} eof")

    def connection_lost(self, exc):
        self.log.append(f"{self.name} lost {type(exc).__name__}")
        self.done.set_result(None)


async def _protocols():
    log = []
    loop = asyncio.get_running_loop()
    server_sides = []

    def factory():
        server_sides.append(Collect(log, "server"))
        return server_sides[-1]

    server = await loop.create_server(factory, "127.0.0.1", 0)
    host, port = server.sockets[0].getsockname()
    print("bound", host, port > 0, server.is_serving(), type(server).__name__)
    transport, client = await loop.create_connection(lambda: Collect(log, "client"), "127.0.0.1", port)
    print("can_write_eof", transport.can_write_eof(), transport.get_write_buffer_size())
    print("peer", transport.get_extra_info("peername") == (host, port))
    print("sockname", transport.get_extra_info("sockname")[0], transport.get_extra_info("socket").family.name)
    transport.write(b"hi")
    await client.done  # the server writes back, then end-of-file: the client's transport closes
    transport.close()
    await server_sides[0].done
    server.close()
    await server.wait_closed()
    print("serving", server.is_serving())
    for line in log:
        print(line)


def protocols():
    asyncio.run(_protocols())


async def _lines(reader, writer):
    async for line in reader:
        writer.write(line.upper())
    writer.close()


async def _streams_until_eof():
    server = await asyncio.start_server(_lines, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("localhost", port)
    writer.writelines([b"one\n", b"two\n"])
    writer.write_eof()
    print("replies", await reader.read())
    print("at_eof", reader.at_eof())
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()


def streams_until_eof():
    asyncio.run(_streams_until_eof())


class Unread(asyncio.Protocol):
    """Reads nothing and closes soon: the client's bytes are left unread, so the close is a reset."""

    def connection_made(self, transport):
        transport.pause_reading()
        asyncio.get_running_loop().call_later(0.05, transport.close)


async def _reset_by_peer():
    loop = asyncio.get_running_loop()
    async with await loop.create_server(Unread, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"abc")
        try:
            print("read", await reader.read(10))
        except ConnectionResetError as error:
            print("reset", error.errno)
        writer.close()


def reset_by_peer():
    asyncio.run(_reset_by_peer())


async def _serve_forever_until_cancelled():
    server = await asyncio.start_server(_lines, "127.0.0.1", 0, start_serving=False)
    print("serving before", server.is_serving())
    forever = asyncio.create_task(server.serve_forever())
    while not server.is_serving():
        await asyncio.sleep(0.01)
    print("serving during", server.is_serving())
    reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname())
    writer.write(b"ping\n")
    print("reply", await reader.readline())
    writer.close()
    await writer.wait_closed()
    forever.cancel()
    try:
        await forever
    except asyncio.CancelledError:
        print("cancelled")
    print("serving after", server.is_serving())


def serve_forever_until_cancelled():
    asyncio.run(_serve_forever_until_cancelled())


async def _port_in_use():
    server = await asyncio.start_server(_lines, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        await asyncio.start_server(_lines, "127.0.0.1", port)
    except OSError as error:
        print("in use", error.errno)
    server.close()
    await server.wait_closed()
    try:
        await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError as error:
        print("refused", error.errno, str(error).startswith("[Errno 111] Connect call failed ('127.0.0.1', "))


def port_in_use():
    asyncio.run(_port_in_use())


async def _unix_socket(path):
    async with await asyncio.start_unix_server(_lines, path) as server:
        print("unix name", server.sockets[0].getsockname() == path)
        reader, writer = await asyncio.open_unix_connection(path)
        writer.write(b"unix\n")
        print("reply", await reader.readline())
        print("peer", writer.get_extra_info("peername") == path)
        writer.close()
        await writer.wait_closed()


def unix_socket():
    with tempfile.TemporaryDirectory() as directory:
        asyncio.run(_unix_socket(os.path.join(directory, "s")))


async def _silent(reader, writer):
    await reader.readline()


async def _both_wait():
    server = await asyncio.start_server(_silent, "127.0.0.1", 0)
    reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname())
    await reader.readline()  # the server waits for a line too: neither ever writes


def both_wait():
    asyncio.run(_both_wait())


async def _subprocess():
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", "print(1)", stdout=asyncio.subprocess.PIPE)
    return await process.communicate()


def subprocess():
    asyncio.run(_subprocess())


async def _real_network():
    await asyncio.open_connection("192.0.2.1", 80)


def real_network():
    asyncio.run(_real_network())


async def _add_reader():
    asyncio.get_running_loop().add_reader(0, print)


def add_reader():
    asyncio.run(_add_reader())


async def _serve_alone():
    server = await asyncio.start_server(_lines, "127.0.0.1", 0)
    async with server:
        await server.serve_forever()


def serve_alone():
    asyncio.run(_serve_alone())


async def _serve_one(ports, ready):
    done = asyncio.Event()

    async def handle(reader, writer):
        writer.write((await reader.readline()).upper())
        writer.close()
        done.set()

    async with await asyncio.start_server(handle, "127.0.0.1", 0) as server:
        ports.append(server.sockets[0].getsockname()[1])
        ready.set()
        await done.wait()


async def _ask(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"across loops\n")
    answer = await reader.readline()
    writer.close()
    return answer


def loops_of_two_threads():
    import threading

    ports, ready = [], threading.Event()
    server = threading.Thread(target=lambda: asyncio.run(_serve_one(ports, ready)))
    server.start()
    ready.wait()
    print("answer", asyncio.run(_ask(ports[0])))
    server.join()


async def _unix_files(path):
    server = await asyncio.start_unix_server(_lines, path)
    print("file while serving", os.path.exists(path))
    try:
        await asyncio.start_unix_server(_lines, path)
        print("second server on the path")
    except OSError as error:
        print("second server", error.errno)
    server.close()
    await server.wait_closed()
    if os.path.exists(path):
        os.unlink(path)
    try:
        await asyncio.open_unix_connection(path)
    except FileNotFoundError as error:
        print("no file", error.errno)


def unix_files():
    with tempfile.TemporaryDirectory() as directory:
        asyncio.run(_unix_files(os.path.join(directory, "s")))


class Lending(asyncio.BufferedProtocol):
    """Lends a small buffer, so a message arrives in pieces of its size."""

    def __init__(self, log):
        self.log = log
        self.buffer = bytearray(4)
        self.done = asyncio.get_running_loop().create_future()

    def connection_made(self, transport):
        self.transport = transport

    def get_buffer(self, sizehint):
        return self.buffer

    def buffer_updated(self, nbytes):
        self.log.append(bytes(self.buffer[:nbytes]))

    def eof_received(self):
        self.log.append("eof")

    def connection_lost(self, exc):
        self.done.set_result(None)


async def _buffered():
    log = []
    loop = asyncio.get_running_loop()

    async def send(reader, writer):
        writer.write(b"0123456789")
        writer.write_eof()
        await reader.read()
        writer.close()

    async with await asyncio.start_server(send, "127.0.0.1", 0) as server:
        transport, protocol = await loop.create_connection(lambda: Lending(log), *server.sockets[0].getsockname())
        await asyncio.sleep(0.01)
        transport.close()
        await protocol.done
    print("pieces", b"".join(piece for piece in log if piece != "eof"), log[-1], max(len(p) for p in log))


def buffered():
    asyncio.run(_buffered())
