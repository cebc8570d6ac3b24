"""The I/O of an asyncio loop that the controlled loop does not model: each call is refused, naming it.

A selector loop reaches the operating system for these: file descriptors
(``add_reader``), raw sockets (``sock_recv``), subprocesses and their
pipes, datagrams, TLS, signals. On the controlled loop they would end in
asyncio's ``NotImplementedError`` (or an ``AttributeError``), which a run
would report as a bug of the program; it is not, so each one stops the
campaign with exit 2 instead (:func:`dnsse.engine.uncontrolled.refuse`).
The refusal happens at the call, before any coroutine is made, so even a
call whose coroutine is never awaited is caught. Servers and connections
over the loopback network are modelled (:mod:`.aio_network`).
"""

from __future__ import annotations

from typing import Any, Callable

from dnsse.engine.uncontrolled import refuse

_SUBPROCESS = "a subprocess runs outside the execution, where dnsse cannot schedule it; check the program without it"
_DESCRIPTOR = (
    "dnsse's event loop watches no operating-system descriptors; servers and connections of asyncio's streams "
    "(start_server, open_connection) on 127.0.0.1 are modelled"
)
_RAW_SOCKET = (
    "a socket the program made itself is a real operating-system socket; use asyncio's streams or "
    "loop.create_server/create_connection on 127.0.0.1, which dnsse models"
)
_PIPE = "a pipe connects to a file or process outside the execution; check the program without it"
_DATAGRAM = "dnsse models stream connections only, not datagrams (UDP); check the program without them"
_TLS = "dnsse models connections as plain byte streams; check the program without TLS"
_SIGNAL = "a signal comes from outside the program; dnsse never delivers one, so its handler could not be checked"
_SENDFILE = "sendfile reads a real file into a real socket; write the file's bytes to the transport instead"

_REFUSED: dict[str, str] = {
    "add_reader": _DESCRIPTOR, "add_writer": _DESCRIPTOR, "remove_reader": _DESCRIPTOR, "remove_writer": _DESCRIPTOR,
    "sock_recv": _RAW_SOCKET, "sock_recv_into": _RAW_SOCKET, "sock_recvfrom": _RAW_SOCKET,
    "sock_recvfrom_into": _RAW_SOCKET, "sock_sendall": _RAW_SOCKET, "sock_sendto": _RAW_SOCKET,
    "sock_connect": _RAW_SOCKET, "sock_accept": _RAW_SOCKET, "sock_sendfile": _RAW_SOCKET,
    "connect_accepted_socket": _RAW_SOCKET,
    "subprocess_exec": _SUBPROCESS, "subprocess_shell": _SUBPROCESS,
    "connect_read_pipe": _PIPE, "connect_write_pipe": _PIPE,
    "create_datagram_endpoint": _DATAGRAM,
    "start_tls": _TLS,
    "sendfile": _SENDFILE,
    "add_signal_handler": _SIGNAL, "remove_signal_handler": _SIGNAL,
}


def _refusing(name: str, advice: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        refuse(f"asyncio loop.{name}", advice)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Not under control: {advice}."
    return method


class RefusedIO:
    """Mixin of :class:`~.event_loop.ControlledLoop`: every unmodelled I/O method refuses."""


for _name, _advice in _REFUSED.items():
    setattr(RefusedIO, _name, _refusing(_name, _advice))
