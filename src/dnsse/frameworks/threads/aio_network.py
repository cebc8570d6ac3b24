"""The controlled loop's servers and connections: asyncio's own API over the execution's loopback network.

``asyncio.start_server`` and ``open_connection`` (and their Unix socket
twins) are built on ``loop.create_server`` and ``loop.create_connection``;
a selector loop implements those with real sockets, this mixin with the
listeners and connections of :mod:`.network`. The server object is
asyncio's own ``Server``, which needs of its loop only ``_start_serving``
and ``_stop_serving``, so ``async with server``, ``close``,
``wait_closed``, ``serve_forever`` and ``is_serving`` behave exactly as in
the running Python's asyncio. Accepting a connection and every protocol
callback happen in callbacks of the loop, as on a selector loop.

TLS, a socket the program made itself, and hosts outside the machine are
not under control: such a call stops the campaign naming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
import stat
import sys
from typing import Any, Callable

from dnsse.engine.uncontrolled import refuse
from dnsse.frameworks.threads.aio_transport import LoopbackSocket, LoopbackTransport
from dnsse.frameworks.threads.network import Listener, names_own_host, network_of
from dnsse.frameworks.threads.outside_clients import servers_of

_TLS = "dnsse models asyncio's connections as plain byte streams; check the program without TLS (ssl=None)"
_REUSE_PORT = (
    "listeners sharing a port get connections as the kernel's hash spreads them, which dnsse does not model; check "
    "the program with one listener per port"
)
_OWN_SOCKET = (
    "a socket the program made itself is a real operating-system socket, which dnsse does not control; pass a host "
    "and port (or a path) instead"
)


class LoopbackNetworking:
    """Mixin of :class:`~.event_loop.ControlledLoop`: servers and connections on the loopback network."""

    _execution: Any

    # -------------------------------------------------------------- servers
    async def create_server(
        self, protocol_factory: Callable[[], asyncio.BaseProtocol], host: Any = None, port: Any = None, *,
        family: int = socket.AF_UNSPEC, flags: int = socket.AI_PASSIVE, sock: Any = None, backlog: int = 100,
        ssl: Any = None, reuse_address: Any = None, reuse_port: Any = None, ssl_handshake_timeout: Any = None,
        ssl_shutdown_timeout: Any = None, start_serving: bool = True, **options: Any,
    ) -> asyncio.AbstractServer:
        _check_plain(ssl, sock, "loop.create_server", server=True)
        if reuse_port:
            refuse("loop.create_server(reuse_port=True)", _REUSE_PORT)
        hosts = [None] if host in (None, "") else [host] if isinstance(host, str) else list(host)
        network = network_of(self._execution)
        listeners: list[Listener] = []
        try:
            for name in hosts:
                listeners.append(_listen(network, _family(name, family), name, port, "loop.create_server"))
        except BaseException:
            for listener in listeners:
                listener.close()
            raise
        return await self._serve(protocol_factory, listeners, backlog, ssl_shutdown_timeout, start_serving)

    async def create_unix_server(
        self, protocol_factory: Callable[[], asyncio.BaseProtocol], path: Any = None, *, sock: Any = None,
        backlog: int = 100, ssl: Any = None, ssl_handshake_timeout: Any = None, ssl_shutdown_timeout: Any = None,
        start_serving: bool = True, **options: Any,
    ) -> asyncio.AbstractServer:
        _check_plain(ssl, sock, "loop.create_unix_server", server=True)
        if path is None:
            raise ValueError("path was not specified, and no sock specified")
        path = os.fspath(path)
        if path and path[0] not in (0, "\0"):
            with contextlib.suppress(FileNotFoundError):  # as asyncio: a stale socket file is replaced
                if stat.S_ISSOCK(os.stat(path).st_mode):
                    os.remove(path)
        try:
            listener = network_of(self._execution).listen(socket.AF_UNIX, path, None, "loop.create_unix_server")
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            raise OSError(errno.EADDRINUSE, f"Address {path!r} is already in use") from None
        # From Python 3.13 on, closing the server removes its file (cleanup_socket, by default).
        cleanup = sys.version_info >= (3, 13) and options.get("cleanup_socket", True) and path[0] != "\0"
        server = await self._serve(protocol_factory, [listener], backlog, ssl_shutdown_timeout, start_serving)
        if cleanup:
            server._sockets[0].cleanup_inode = os.stat(path).st_ino
        return server

    async def _serve(
        self, protocol_factory: Callable, listeners: list[Listener], backlog: int, ssl_shutdown_timeout: Any,
        start_serving: bool,
    ) -> asyncio.AbstractServer:
        sockets = [_ListeningSocket(listener) for listener in listeners]
        server = asyncio.base_events.Server(
            self, sockets, protocol_factory, None, backlog, None, ssl_shutdown_timeout  # type: ignore[arg-type]
        )
        servers_of(self._execution).append(server)
        if start_serving:
            server._start_serving()
            await asyncio.sleep(0)
        return server

    def _start_serving(
        self, protocol_factory: Callable, sock: _ListeningSocket, sslcontext: Any = None, server: Any = None,
        *more: Any,
    ) -> None:
        """Called by ``Server``: accept, in a callback of this loop, every connection that waits or will."""
        listener = sock.listener

        def wake() -> None:
            if not listener.closed and not self.is_closed():  # type: ignore[attr-defined]
                self.call_soon(self._accept, protocol_factory, listener, server)  # type: ignore[attr-defined]

        listener.waker = wake
        if listener.backlog:
            wake()

    def _stop_serving(self, sock: _ListeningSocket) -> None:
        sock.listener.waker = None
        sock.listener.close()
        if sock.cleanup_inode is not None:
            with contextlib.suppress(FileNotFoundError):
                if os.stat(sock.listener.address).st_ino == sock.cleanup_inode:  # type: ignore[arg-type]
                    os.unlink(sock.listener.address)  # type: ignore[arg-type]

    def _accept(self, protocol_factory: Callable, listener: Listener, server: Any) -> None:
        while (endpoint := listener.accept()) is not None:
            try:
                protocol = protocol_factory()
            except Exception:  # noqa: BLE001 - as asyncio: a connection whose protocol failed is dropped
                endpoint.close()
                continue
            LoopbackTransport(self, endpoint, protocol, server=server)  # type: ignore[arg-type]

    # ---------------------------------------------------------- connections
    async def create_connection(
        self, protocol_factory: Callable[[], asyncio.BaseProtocol], host: Any = None, port: Any = None, *,
        ssl: Any = None, family: int = 0, proto: int = 0, flags: int = 0, sock: Any = None, local_addr: Any = None,
        server_hostname: Any = None, **options: Any,
    ) -> tuple[asyncio.Transport, asyncio.BaseProtocol]:
        _check_plain(ssl, sock, "loop.create_connection")
        if local_addr is not None:
            refuse("loop.create_connection(local_addr=...)",
                   "dnsse picks the client's own address; check the program without local_addr")
        if host is None or port is None:
            raise ValueError("host and port was not specified and no sock specified")
        try:
            endpoint = network_of(self._execution).connect(_family(host, family), host, port,
                                                           "loop.create_connection")
        except ConnectionRefusedError as error:
            # As a selector loop words it.
            family = _family(host, family)
            target = (host, int(port)) if family == socket.AF_INET else (host, int(port), 0, 0)
            raise ConnectionRefusedError(error.errno, f"Connect call failed {target!r}") from None
        return await self._connected(protocol_factory, endpoint)

    async def create_unix_connection(
        self, protocol_factory: Callable[[], asyncio.BaseProtocol], path: Any = None, *, ssl: Any = None,
        sock: Any = None, server_hostname: Any = None, **options: Any,
    ) -> tuple[asyncio.Transport, asyncio.BaseProtocol]:
        _check_plain(ssl, sock, "loop.create_unix_connection")
        if path is None:
            raise ValueError("no path and sock were specified")
        endpoint = network_of(self._execution).connect(socket.AF_UNIX, os.fspath(path), None,
                                                       "loop.create_unix_connection")
        return await self._connected(protocol_factory, endpoint)

    async def _connected(self, protocol_factory: Callable, endpoint: Any) -> tuple[Any, Any]:
        protocol = protocol_factory()
        waiter = self.create_future()  # type: ignore[attr-defined]
        transport = LoopbackTransport(self, endpoint, protocol, waiter)  # type: ignore[arg-type]
        try:
            await waiter
        except BaseException:
            transport.close()
            raise
        return transport, protocol

    # ---------------------------------------------------------- names
    async def getaddrinfo(self, host: Any, port: Any, *, family: int = 0, type: int = 0, proto: int = 0,
                          flags: int = 0) -> list:
        """Names of the host itself resolve as usual (no network is asked); others would ask DNS."""
        if not names_own_host(host, numeric=True):
            refuse(f"loop.getaddrinfo of {host!r}",
                   "resolving a name outside the program's own host asks the real network; use 127.0.0.1")
        return await super().getaddrinfo(  # type: ignore[misc]
            host, port, family=family, type=type, proto=proto, flags=flags)

    async def getnameinfo(self, sockaddr: Any, flags: int = 0) -> tuple[str, str]:
        if not names_own_host(sockaddr[0]):
            refuse(f"loop.getnameinfo of {sockaddr[0]!r}",
                   "naming an address outside the program's own host asks the real network")
        return await super().getnameinfo(sockaddr, flags)  # type: ignore[misc]


class _ListeningSocket(LoopbackSocket):
    """A server's socket: asyncio's ``Server`` holds these and hands them back to the loop."""

    def __init__(self, listener: Listener) -> None:
        super().__init__(listener.family, listener.address, None)
        self.listener = listener
        # The inode of a Unix socket's file that closing the server removes, if it still is that file.
        self.cleanup_inode: int | None = None


def _listen(network: Any, family: int, host: Any, port: Any, api: str) -> Listener:
    """Bind and listen, failing with the message asyncio's ``create_server`` gives."""
    try:
        return network.listen(family, host, port, api)
    except OSError as error:
        shown = (host, int(port or 0)) if family == socket.AF_INET else (host, int(port or 0), 0, 0)
        raise OSError(error.errno, f"error while attempting to bind on address {shown!r}: "
                      f"{error.strerror.lower()}") from None


def _check_plain(ssl: Any, sock: Any, api: str, server: bool = False) -> None:
    """Refuse TLS and the program's own sockets; a server's ``ssl=True`` is the ``TypeError`` asyncio raises."""
    if isinstance(ssl, bool) and server:
        raise TypeError("ssl argument must be an SSLContext or None")
    if ssl:
        refuse(f"{api}(ssl=...)", _TLS)
    if sock is not None:
        refuse(f"{api}(sock=...)", _OWN_SOCKET)


def _family(host: Any, family: int) -> int:
    if family in (socket.AF_INET, socket.AF_INET6):
        return family
    return socket.AF_INET6 if isinstance(host, str) and ":" in host else socket.AF_INET
