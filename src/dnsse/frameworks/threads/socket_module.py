"""Give a threads program's agents modelled sockets: ``socket.socket`` and the module's helpers, while active.

``socket.create_connection``, ``create_server`` and ``socket.socket.accept``
look ``socket`` up in the module when they run, so replacing the class is
enough for them (see :mod:`.blocking_socket`). Name resolution of a host
other than this one would ask the real network's DNS, and a socket pair or
a socket from a descriptor is made of real descriptors: those are refused.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any, Iterator

from dnsse.engine.execution import current_agent
from dnsse.engine.uncontrolled import Refusal, refuse, refused
from dnsse.frameworks.threads.blocking_socket import MODELLED, ControlledSocket
from dnsse.frameworks.threads.network import names_own_host

_REAL_SOCKET = socket.socket
_REAL_GETADDRINFO = socket.getaddrinfo


def _getaddrinfo(host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0) -> list:
    """Names of the host itself resolve as usual; another name would ask the real network's DNS."""
    agent = current_agent()
    if agent is not None and not agent.execution.scheduling and not names_own_host(host, numeric=True):
        refuse(f"socket.getaddrinfo of {host!r}",
               "resolving a name outside the program's own host asks the real network; use 127.0.0.1")
    return _REAL_GETADDRINFO(host, port, family, type, proto, flags)


_PAIRS = "a socket pair is made of real descriptors; " + MODELLED
_REFUSED = (
    Refusal("socket", "socketpair", "socket.socketpair", _PAIRS),
    Refusal("socket", "fromfd", "socket.fromfd", _PAIRS),
)


@contextlib.contextmanager
def controlled_sockets() -> Iterator[None]:
    """Install the modelled socket for agents; everything is restored on exit."""
    socket.socket = ControlledSocket  # type: ignore[misc]
    socket.getaddrinfo = _getaddrinfo
    try:
        with refused(_REFUSED):
            yield
    finally:
        socket.getaddrinfo = _REAL_GETADDRINFO
        socket.socket = _REAL_SOCKET  # type: ignore[misc]
