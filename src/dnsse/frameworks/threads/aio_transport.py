"""asyncio transports and sockets over the loopback network of :mod:`.network`.

A :class:`LoopbackTransport` is what asyncio's selector transport is to a
real socket: it calls its protocol through the loop's callbacks, as asyncio
does (``connection_made``, then ``data_received`` once data arrived,
``eof_received`` at end-of-file, ``connection_lost`` after a close), so the
protocols of asyncio's streams run unchanged on it, and a handler task
woken by data is scheduled like any other task. Data arrives when the
writer's agent appends it to the pipe; the reader's loop is then asked to
deliver it, and when that happens relative to the other agents' steps is a
scheduling choice.

Writes never wait (the pipes are unbounded, see :mod:`.network`), so
``get_write_buffer_size()`` is always 0 and ``StreamWriter.drain()`` waits
only for a lost connection. :class:`LoopbackSocket` stands in for the socket
object where asyncio shows one (``Server.sockets``,
``get_extra_info('socket')``): names, families and harmless options work;
anything that would act on a real descriptor is not under control.
"""

from __future__ import annotations

import asyncio
import errno
import inspect
import socket
from asyncio import futures, trsock
from typing import Any

from dnsse.engine.uncontrolled import refuse
from dnsse.frameworks.threads.network import Endpoint

# What a selector transport takes from a socket at once.
_MAX_SIZE = 256 * 1024
# Server._attach()/_detach() take the transport from Python 3.13 on.
_SERVER_TRACKS_TRANSPORTS = len(inspect.signature(asyncio.base_events.Server._attach).parameters) > 1
_HIGH_WATER = 64 * 1024


class LoopbackSocket:
    """The socket object of a listener or connection: what ``getsockname()`` and friends answer."""

    def __init__(self, family: int, address: object, peer: object | None) -> None:
        self.family = socket.AddressFamily(family)
        self.type = socket.SocketKind.SOCK_STREAM
        self.proto = 0 if family == socket.AF_UNIX else socket.IPPROTO_TCP
        self._address = address
        self._peer = peer
        self._options: dict[tuple[int, int], Any] = {}

    def getsockname(self) -> object:
        return self._address

    def getpeername(self) -> object:
        if self._peer is None:
            raise OSError(errno.ENOTCONN, "Transport endpoint is not connected")
        return self._peer

    def fileno(self) -> int:
        return -1

    def listen(self, backlog: int = 0) -> None:
        """Listeners listen from their creation: nothing to do."""

    def setsockopt(self, level: int, option: int, value: Any, *rest: Any) -> None:
        """Options change only timing and buffer sizes, which the model does not have: they are remembered."""
        self._options[(level, option)] = value

    def getsockopt(self, level: int, option: int, *rest: Any) -> Any:
        return self._options.get((level, option), 0)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        refuse(f"socket.{name} of an asyncio transport",
               "dnsse models asyncio's connections, not their sockets' descriptors; use the transport's methods")

    def __repr__(self) -> str:
        return f"<loopback socket family={self.family!s} laddr={self._address!r} raddr={self._peer!r}>"


def transport_socket(sock: LoopbackSocket) -> trsock.TransportSocket:
    return trsock.TransportSocket(sock)  # type: ignore[arg-type]


class LoopbackTransport(asyncio.Transport):
    """One end of a loopback connection, as a selector transport of ``loop`` running ``protocol``."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, endpoint: Endpoint, protocol: asyncio.BaseProtocol,
        waiter: asyncio.Future | None = None, server: Any = None,
    ) -> None:
        sock = LoopbackSocket(endpoint.family, endpoint.address, endpoint.peer_address)
        super().__init__({"socket": transport_socket(sock), "sockname": endpoint.address,
                          "peername": endpoint.peer_address})
        self._loop = loop
        self._endpoint = endpoint
        self._protocol = protocol
        self._server = server
        self._closing = False
        self._paused = False
        self._eof_written = False
        self._eof_delivered = False
        self._delivery_scheduled = False
        self._lost_scheduled = False
        self._high_water, self._low_water = _HIGH_WATER, _HIGH_WATER // 4
        if server is not None:
            server._attach(self) if _SERVER_TRACKS_TRANSPORTS else server._attach()
        loop.call_soon(protocol.connection_made, self)
        loop.call_soon(self._start_reading)
        if waiter is not None:
            loop.call_soon(futures._set_result_unless_cancelled, waiter, None)

    # ------------------------------------------------------------- reading
    def _start_reading(self) -> None:
        if self._closing:
            return
        self._endpoint.inbound.waker = self._wake
        self._wake()

    def _wake(self) -> None:
        """Something arrived (called by the writer's agent): the loop delivers it in a callback of its own."""
        pipe = self._endpoint.inbound
        # After end-of-file a selector transport reads no more: a later reset goes unseen.
        pending = not self._eof_delivered and (pipe.data or pipe.reset or pipe.eof)
        if not pending or self._delivery_scheduled or self._paused or self._closing or self._loop.is_closed():
            return
        self._delivery_scheduled = True
        self._loop.call_soon(self._deliver)

    def _deliver(self) -> None:
        self._delivery_scheduled = False
        if self._paused or self._closing:
            return
        pipe = self._endpoint.inbound
        if isinstance(self._protocol, asyncio.BufferedProtocol) and (pipe.data or not pipe.reset):
            self._deliver_into_buffer(pipe)
            return
        data = pipe.take(_MAX_SIZE)
        if not data and pipe.reset:
            self._force_close(ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"))
            return
        if data:
            try:
                self._protocol.data_received(data)  # type: ignore[attr-defined]
            except Exception as exc:  # noqa: BLE001 - as asyncio: the transport fails, the loop logs it
                self._fatal_error(exc, "Fatal error: protocol.data_received() call failed.")
                return
        elif pipe.eof:
            self._eof_delivered = True
            try:
                keep_open = self._protocol.eof_received()  # type: ignore[attr-defined]
            except Exception as exc:  # noqa: BLE001 - as asyncio
                self._fatal_error(exc, "Fatal error: protocol.eof_received() call failed.")
                return
            if not keep_open:
                self.close()
            return
        self._wake()

    def _deliver_into_buffer(self, pipe: Any) -> None:
        """As a selector transport serves a ``BufferedProtocol``: into the buffer it lends, then ``buffer_updated``."""
        protocol: Any = self._protocol
        if pipe.data:
            try:
                buffer = memoryview(protocol.get_buffer(-1)).cast("B")
                if not len(buffer):
                    raise RuntimeError("get_buffer() returned an empty buffer")
                data = pipe.take(len(buffer))
                buffer[: len(data)] = data
                protocol.buffer_updated(len(data))
            except Exception as exc:  # noqa: BLE001 - as asyncio: the transport fails, the loop logs it
                self._fatal_error(exc, "Fatal error: protocol.buffer_updated() call failed.")
                return
            self._wake()
            return
        self._eof_delivered = True
        try:
            keep_open = protocol.eof_received()
        except Exception as exc:  # noqa: BLE001 - as asyncio
            self._fatal_error(exc, "Fatal error: protocol.eof_received() call failed.")
            return
        if not keep_open:
            self.close()

    def pause_reading(self) -> None:
        if self._closing or self._paused:
            return
        self._paused = True

    def resume_reading(self) -> None:
        if self._closing or not self._paused:
            return
        self._paused = False
        self._wake()

    def is_reading(self) -> bool:
        return not self._paused and not self._closing

    # ------------------------------------------------------------- writing
    def write(self, data: Any) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data argument must be a bytes-like object, not {type(data).__name__!r}")
        if self._eof_written:
            raise RuntimeError("Cannot call write() after write_eof()")
        if not data or self._closing:
            return
        self._endpoint.send(bytes(data))

    def write_eof(self) -> None:
        if self._closing or self._eof_written:
            return
        self._eof_written = True
        self._endpoint.shutdown_write()

    def can_write_eof(self) -> bool:
        return True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (self._low_water, self._high_water)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        if high is None:
            high = _HIGH_WATER if low is None else 4 * low
        if low is None:
            low = high // 4
        if not high >= low >= 0:
            raise ValueError(f"high ({high!r}) must be >= low ({low!r}) must be >= 0")
        self._high_water, self._low_water = high, low

    # ------------------------------------------------------------- closing
    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._endpoint.close()
        self._schedule_lost(None)

    def abort(self) -> None:
        self._force_close(None)

    def _fatal_error(self, exc: BaseException, message: str) -> None:
        if not isinstance(exc, OSError):
            self._loop.call_exception_handler(
                {"message": message, "exception": exc, "transport": self, "protocol": self._protocol}
            )
        self._force_close(exc)

    def _force_close(self, exc: BaseException | None) -> None:
        if self._lost_scheduled:
            return
        self._closing = True
        self._endpoint.close()
        self._schedule_lost(exc)

    def _schedule_lost(self, exc: BaseException | None) -> None:
        if self._lost_scheduled:
            return
        self._lost_scheduled = True
        self._loop.call_soon(self._call_connection_lost, exc)

    def _call_connection_lost(self, exc: BaseException | None) -> None:
        try:
            self._protocol.connection_lost(exc)
        finally:
            server, self._server = self._server, None
            if server is not None:
                server._detach(self) if _SERVER_TRACKS_TRANSPORTS else server._detach()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._protocol = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._protocol

    def __repr__(self) -> str:
        state = "closing" if self._closing else "open"
        return f"<LoopbackTransport {state} laddr={self._endpoint.address!r} raddr={self._endpoint.peer_address!r}>"
