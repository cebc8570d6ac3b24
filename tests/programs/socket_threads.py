"""Blocking sockets between a program's own threads on 127.0.0.1: each function prints what it saw.

The tests run these under plain Python (real sockets) and under dnsse, and
compare the printed lines; the last ones are a deadlock, a server waiting
for outside clients, and a real host.
"""

import socket
import threading


def _echo_once(server, lines):
    connection, _ = server.accept()
    with connection:
        data = b""
        while not data.endswith(b"\n"):
            chunk = connection.recv(4)
            if not chunk:
                break
            data += chunk
        lines.append(f"server got {data!r}")
        connection.sendall(data.upper())


def echo():
    lines = []
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        worker = threading.Thread(target=_echo_once, args=(server, lines))
        worker.start()
        with socket.create_connection(("127.0.0.1", port)) as client:
            print("peer matches", client.getpeername() == ("127.0.0.1", port))
            client.sendall(b"hello over tcp\n")
            print("reply", client.recv(100))
            print("then", client.recv(100))
        worker.join()
    print(*lines)


def files():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()

        def serve():
            connection, _ = server.accept()
            with connection, connection.makefile("rwb") as stream:
                for line in stream:
                    stream.write(b"> " + line)
                    stream.flush()

        worker = threading.Thread(target=serve)
        worker.start()
        with socket.create_connection(server.getsockname()) as client, client.makefile("rwb") as stream:
            for word in (b"one\n", b"two\n"):
                stream.write(word)
                stream.flush()
                print("line", stream.readline())
            client.shutdown(socket.SHUT_WR)
            print("end", stream.read())
        worker.join()


def refused_and_timeout():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    try:
        socket.create_connection(("127.0.0.1", port))
    except ConnectionRefusedError as error:
        print("refused", error.errno)
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.5)
        try:
            server.accept()
        except TimeoutError as error:
            print("timeout", error)
        server.setblocking(False)
        try:
            server.accept()
        except BlockingIOError as error:
            print("would block", error.errno)


def missing_send():
    with socket.create_server(("127.0.0.1", 0)) as server:
        worker = threading.Thread(target=lambda: server.accept()[0].recv(10))
        worker.start()
        with socket.create_connection(server.getsockname()) as client:
            client.recv(10)  # both sides wait to read: neither ever sends
        worker.join()


def serve_outsiders():
    with socket.create_server(("127.0.0.1", 0)) as server:
        while True:
            connection, _ = server.accept()
            connection.close()


def real_host():
    socket.create_connection(("192.0.2.1", 80), timeout=1)


def accept_order():
    with socket.create_server(("127.0.0.1", 0)) as server:
        address = server.getsockname()

        def client(number):
            with socket.create_connection(address) as connection:
                connection.sendall(bytes([number]))

        threads = [threading.Thread(target=client, args=(number,)) for number in (1, 2)]
        for thread in threads:
            thread.start()
        order = []
        for _ in threads:
            connection, _ = server.accept()
            with connection:
                order.append(connection.recv(1)[0])
        for thread in threads:
            thread.join()
    assert order == [1, 2], f"clients accepted in the order {order}"


def unix_path():
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "socket")
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(path)
            server.listen()
            print("file", os.path.exists(path))
            try:
                socket.socket(socket.AF_UNIX).bind(path)
            except OSError as error:
                print("taken", error.errno)
            worker = threading.Thread(target=lambda: server.accept()[0].sendall(b"over a path"))
            worker.start()
            with socket.socket(socket.AF_UNIX) as client:
                client.connect(path)
                print("peer", client.getpeername() == path, client.recv(100))
            worker.join()
        os.unlink(path)
        try:
            socket.socket(socket.AF_UNIX).connect(path)
        except FileNotFoundError as error:
            print("gone", error.errno)


def selected():
    import selectors

    with socket.create_server(("127.0.0.1", 0)) as server, selectors.DefaultSelector() as selector:
        selector.register(server, selectors.EVENT_READ)
