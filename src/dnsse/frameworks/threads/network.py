"""The loopback network inside one execution: listeners by address, connections as pairs of byte pipes.

A program that serves and connects to itself over ``127.0.0.1`` (or a Unix
socket) talks only to itself, so its network can be modelled in full: the
execution holds one :class:`Network` (every agent, event loop and Ray worker
of it shares the one host), and nothing reaches the operating system. Ports
are numbered per execution, so a replay binds the same ones.

The model is plain bookkeeping, independent of asyncio: a reader is told
that data arrived through the pipe's ``waker`` (an asyncio transport
schedules its delivery with it), or tests the pipe itself (a blocking reader's
wait). Each write is appended whole to the peer's pipe; a reader takes what
is there, several writes at once if they arrived before it read. Buffers are
unbounded: a writer never waits for its peer to read (kernel buffers hold
much, and waiting where a real one would not could report a deadlock that
is not there).

A connection to an address of the host that nothing listens on is refused
(``ConnectionRefusedError``), as the operating system refuses it; a host
outside the machine (the real network) is not under control.
"""

from __future__ import annotations

import _socket
import collections
import errno
import ipaddress
import os
import socket
from typing import TYPE_CHECKING, Callable

from dnsse.engine.operation import Access
from dnsse.engine.uncontrolled import refuse

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution

# Linux's default range of ephemeral ports (net.ipv4.ip_local_port_range).
_EPHEMERAL = range(32768, 61000)
_WILDCARDS = {socket.AF_INET: "0.0.0.0", socket.AF_INET6: "::"}
_LOOPBACKS = {socket.AF_INET: "127.0.0.1", socket.AF_INET6: "::1"}
_OUTSIDE = (
    "a connection outside the program's own host goes to the real network, which dnsse does not model; check the "
    "program against a server of its own on 127.0.0.1 or ::1"
)


class Pipe:
    """The bytes one endpoint sent and the other has not read yet, then end-of-file or a reset."""

    __slots__ = ("data", "eof", "reset", "waker", "touch")
    # A reset is read after the bytes that came before it, as Linux's recv returns them first.

    def __init__(self, touch: Callable[[], None]) -> None:
        # Tells the execution that the running step used the pipe (see Network).
        self.touch = touch
        self.data = bytearray()
        self.eof = False
        self.reset = False
        # Called after every change, when the reading side asked to be told.
        self.waker: Callable[[], None] | None = None

    def wake(self) -> None:
        self.touch()
        if self.waker is not None:
            self.waker()

    def take(self, limit: int = -1) -> bytes:
        """Up to ``limit`` bytes (all: -1) in the order they were written."""
        self.touch()
        size = len(self.data) if limit < 0 else min(limit, len(self.data))
        chunk = bytes(self.data[:size])
        del self.data[:size]
        return chunk


class Endpoint:
    """One side of a connection: what it reads (``inbound``) and what its peer reads (``outbound``)."""

    def __init__(
        self, name: str, family: int, address: object, peer_address: object, inbound: Pipe, outbound: Pipe
    ) -> None:
        self.name = name  # the connection's, as scheduling points name it
        self.family = family
        self.address = address
        self.peer_address = peer_address
        self.inbound = inbound
        self.outbound = outbound
        self.closed = False

    def send(self, data: bytes) -> None:
        """Hand bytes to the peer; after a shutdown or close of either side they are lost.

        (A real peer that closed answers them with a reset, which may come
        after the writer's next calls: losing them is one of the timings.)
        """
        if self.closed or self.outbound.eof or self.outbound.reset or not data:
            return
        self.outbound.data += data
        self.outbound.wake()

    def shutdown_write(self) -> None:
        """The peer reads end-of-file once it has read what was sent (``shutdown(SHUT_WR)``, a FIN)."""
        if not self.outbound.eof and not self.outbound.reset:
            self.outbound.eof = True
            self.outbound.wake()

    def close(self) -> None:
        """Done with the connection: the peer reads end-of-file, or, when bytes it sent were left unread, a reset.

        So the operating system closes a TCP socket; an abort is the same
        close here, since sent bytes are already with the peer.
        """
        if self.closed:
            return
        self.closed = True
        unread = bool(self.inbound.data)
        self.inbound.touch()
        self.inbound.waker = None
        self.inbound.data.clear()
        if unread and not self.outbound.reset:
            self.outbound.reset = True
            self.outbound.wake()
        else:
            self.shutdown_write()


class Listener:
    """A listening socket: connections the host completed wait in ``backlog`` until accepted."""

    def __init__(self, network: Network, key: tuple, address: object, family: int) -> None:
        self.network = network
        self.key = key
        self.address = address
        self.family = family
        self.backlog: collections.deque[Endpoint] = collections.deque()
        # Called once a connection waits in the backlog, when the accepting side asked to be told.
        self.waker: Callable[[], None] | None = None
        self.closed = False

    def accept(self) -> Endpoint | None:
        return self.backlog.popleft() if self.backlog else None

    def close(self) -> None:
        """Stop listening: connections never accepted are reset, as closing a listening socket resets them."""
        if self.closed:
            return
        self.closed = True
        self.network.touch("network")
        if self.network._listeners.get(self.key) is self:
            del self.network._listeners[self.key]
        self.network._bound.discard(self.key)
        while self.backlog:
            endpoint = self.backlog.popleft()
            endpoint.inbound.data += b"\0"  # never read: its client sees a reset
            endpoint.close()


class Network:
    """Every listener of one execution's host, and the ports in use.

    ``touch(name)`` tells the execution that the running step used the
    object ``name`` (the listeners, a connection), so that a search that
    reorders only dependent steps sees a write and the read of it as
    dependent even when their agents' operations name different loops.
    """

    def __init__(self, touch: Callable[[str], None] = lambda name: None) -> None:
        self.touch = touch
        self._connections = 0
        self._listeners: dict[tuple, Listener] = {}
        self._bound: set[tuple] = set()
        self._ports: set[tuple[int, int]] = set()
        self._next_port = _EPHEMERAL.start

    def bind(self, family: int, host: str | None, port: int | str | None, api: str) -> object:
        """Reserve ``(host, port)`` (a path for ``AF_UNIX``) and return the bound address; port 0 picks a free one."""
        self.touch("network")
        if family == socket.AF_UNIX:
            address: object = os.fspath(host)  # type: ignore[arg-type]
            if _abstract(address):
                if (family, address) in self._bound:
                    raise OSError(errno.EADDRINUSE, os.strerror(errno.EADDRINUSE))
                self._bound.add((family, address))
            else:
                _make_socket_file(str(address))
            return address
        host = _WILDCARDS[family] if host in (None, "") else self.host_address(family, str(host), api, bind=True)
        number = int(port or 0)
        if number == 0:
            number = self._free_port(family)
        elif self._clashes(family, host, number):
            raise OSError(errno.EADDRINUSE, os.strerror(errno.EADDRINUSE))
        self._ports.add((family, number))
        self._bound.add((family, host, number))
        return (host, number) if family == socket.AF_INET else (host, number, 0, 0)

    def _clashes(self, family: int, host: str, port: int) -> bool:
        """Whether the port is bound on that address already, or on the wildcard, or (for the wildcard) on any."""
        wildcard = _WILDCARDS[family]
        return any(
            key[0] == family and key[2] == port and wildcard in (host, key[1]) or key[1:] == (host, port)
            for key in self._bound if len(key) == 3
        )

    def unbind(self, family: int, address: object) -> None:
        """A bound socket closed: its address is free again."""
        self._bound.discard(_key(family, address))

    def listen_at(self, family: int, address: object) -> Listener:
        """Start listening at an address :meth:`bind` gave."""
        self.touch("network")
        key = _key(family, address)
        # A path whose file was removed may be bound again: the newest listener has it.
        listener = self._listeners[key] = Listener(self, key, address, family)
        return listener

    def listen(self, family: int, host: str | None, port: int | str | None, api: str) -> Listener:
        """Bind and listen at once, as a server of asyncio does."""
        return self.listen_at(family, self.bind(family, host, port, api))

    def connect(self, family: int, host: str, port: int | str | None, api: str) -> Endpoint:
        """The client's end of a new connection to ``(host, port)``; refused when nothing listens there."""
        self.touch("network")
        if family == socket.AF_UNIX:
            target: object = os.fspath(host)
            if not _abstract(target) and not os.path.exists(str(target)):
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
            listener = self._listeners.get((family, target))
            local: object = ""
        else:
            host = self.host_address(family, host, api, bind=False)
            number = int(port or 0)
            target = (host, number) if family == socket.AF_INET else (host, number, 0, 0)
            listener = self._listeners.get((family, host, number)) or self._listeners.get(
                (family, _WILDCARDS[family], number))
            local = (_LOOPBACKS[family], self._free_port(family))
            if family == socket.AF_INET6:
                local = (*local, 0, 0)
        if listener is None:
            raise ConnectionRefusedError(errno.ECONNREFUSED, os.strerror(errno.ECONNREFUSED))
        if family != socket.AF_UNIX:
            self._ports.add((family, local[1]))  # type: ignore[index]
        self._connections += 1
        name = f"connection#{self._connections}"
        # Both directions are one object: a read depends on the peer's writes and on its close alike.
        to_server, to_client = Pipe(lambda: self.touch(name)), Pipe(lambda: self.touch(name))
        client = Endpoint(name, family, local, target, inbound=to_client, outbound=to_server)
        server = Endpoint(name, family, target, local, inbound=to_server, outbound=to_client)
        listener.backlog.append(server)
        if listener.waker is not None:
            listener.waker()
        return client

    def host_address(self, family: int, host: str, api: str, bind: bool) -> str:
        """The numeric loopback address ``host`` names; any other host is not under control."""
        if host == "localhost":
            return _LOOPBACKS[family]
        try:
            address = ipaddress.ip_address(host.split("%")[0])
        except ValueError:
            address = None
        if address is not None and (address.is_loopback or (bind and address.is_unspecified)):
            return str(address)
        refuse(f"{api} to {host!r}", _OUTSIDE)

    def _free_port(self, family: int) -> int:
        while (family, self._next_port) in self._ports:
            self._next_port += 1
        port = self._next_port
        self._ports.add((family, port))
        self._next_port += 1
        return port


def names_own_host(host: object, numeric: bool = False) -> bool:
    """Whether ``host`` is this host (or, with ``numeric``, any address written as numbers: no lookup needed)."""
    if host is None or host in ("", "localhost"):
        return True
    try:
        address = ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return False
    return numeric or address.is_loopback or address.is_unspecified


def _abstract(path: object) -> bool:
    """A name in Linux's abstract namespace (a leading NUL): no file on disk."""
    return not path or str(path)[0] == "\0"


def _make_socket_file(path: str) -> None:
    """Leave at ``path`` the file a Unix socket's bind leaves (failing as that bind fails: the path exists).

    Programs stat, unlink and clean up these files; a real socket bound
    there and closed at once leaves the same file, through ``_socket`` (the
    module's ``socket.socket`` may be the modelled one).
    """
    probe = _socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.bind(path)
    finally:
        probe.close()


def _key(family: int, address: object) -> tuple:
    if family == socket.AF_UNIX:
        return (family, address)
    return (family, address[0], address[1])  # type: ignore[index]


def network_of(execution: Execution) -> Network:
    """The network of an execution's host, made on first use."""
    state = execution.framework_state
    network = state.get("network")
    if network is None:
        network = state["network"] = Network(lambda name: execution.touch(((name, Access.SYNC),)))
    return network
