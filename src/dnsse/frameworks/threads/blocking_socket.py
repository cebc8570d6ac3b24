"""``socket.socket`` for the agents of a threads program: stream sockets on the execution's loopback network.

A real blocking ``accept`` or ``recv`` would stop the one OS thread that all
agents share until the wall-clock limit ends the run, inconclusive. Here a
socket an agent makes is a socket of :mod:`.network`: ``accept`` and
``recv`` are controlled waits (a thread waiting for a connection or for
bytes that no one will send is in a deadlock, reported with where it
waits), ``connect`` and ``send`` are scheduling points, and the rest of the
socket API answers as the operating system would (names, options,
timeouts, ``makefile``, ``socket.create_connection`` and
``create_server``). A socket made outside an agent (dnsse's own, a
library's thread) is the real one. :mod:`.socket_module` installs it.

What the model cannot honestly answer is refused, naming the call:
datagram and raw sockets, a socket made from a descriptor, ``fileno()``
(``select``, ``selectors``), ``sendto``/``recvmsg`` and friends,
``recv`` flags, and hosts outside the machine.
"""

from __future__ import annotations

import errno
import os
import socket
from typing import Any

from dnsse.engine.agent import Wait
from dnsse.engine.execution import current_agent
from dnsse.engine.operation import Access, Operation
from dnsse.engine.uncontrolled import refuse
from dnsse.frameworks.threads.network import Endpoint, Listener, network_of
from dnsse.frameworks.threads.outside_clients import AcceptWait, watch_accepts
from dnsse.frameworks.threads.runtime import runtime_for

_REAL = socket.socket
_STREAM_FLAGS = getattr(socket, "SOCK_NONBLOCK", 0) | getattr(socket, "SOCK_CLOEXEC", 0)
MODELLED = (
    "dnsse models stream sockets between the program's own threads on 127.0.0.1, ::1 or a Unix path; "
    "check the program without this call"
)


_DESCRIPTOR = (
    "a socket between the program's own threads has no operating-system descriptor, which is what select, "
    "selectors and socketserver's serve_forever wait on; use blocking calls, or timeouts, on the socket itself"
)


class _Model:
    """The state of one modelled socket."""

    def __init__(self, execution: Any, family: int, sock_type: int, label: str) -> None:
        self.execution = execution
        self.family = family
        self.type = sock_type
        self.label = label
        self.timeout: float | None = socket.getdefaulttimeout()
        self.address: object = None
        self.listener: Listener | None = None
        self.endpoint: Endpoint | None = None
        self.read_shut = False
        self.write_shut = False
        self.closed = False
        self.options: dict[tuple[int, int], Any] = {}


class ControlledSocket(_REAL):
    """A real socket outside agents; inside one, a socket of the execution's network."""

    __slots__ = ("_model",)

    def __init__(self, family: Any = -1, type: Any = -1, proto: Any = -1, fileno: Any = None) -> None:
        agent = current_agent()
        if agent is None or agent.execution.scheduling:
            self._model = None
            super().__init__(family, type, proto, fileno)
            return
        family = socket.AF_INET if family == -1 else family
        kind = socket.SOCK_STREAM if type == -1 else type & ~_STREAM_FLAGS
        if fileno is not None:
            refuse("socket.socket(fileno=...)", "a descriptor comes from outside the model; " + MODELLED)
        if family not in (socket.AF_INET, socket.AF_INET6, socket.AF_UNIX) or kind != socket.SOCK_STREAM:
            refuse(f"socket.socket({socket.AddressFamily(family).name}, {socket.SocketKind(kind).name})", MODELLED)
        self._io_refs = 0
        self._closed = False
        self._model = _new_model(agent.execution, family)
        if type != -1 and type & getattr(socket, "SOCK_NONBLOCK", 0):
            self._model.timeout = 0.0

    # ---------------------------------------------------------- identity
    @property
    def family(self) -> socket.AddressFamily:  # type: ignore[override]
        return socket.AddressFamily(self._model.family) if self._model is not None else super().family

    @property
    def type(self) -> socket.SocketKind:  # type: ignore[override]
        return socket.SocketKind(self._model.type) if self._model is not None else super().type

    @property
    def proto(self) -> int:  # type: ignore[override]
        if self._model is None:
            return super().proto
        return 0

    @property
    def timeout(self) -> float | None:  # type: ignore[override]
        return self._model.timeout if self._model is not None else super().timeout

    def __repr__(self) -> str:
        if self._model is None:
            return super().__repr__()
        model = self._model
        state = "closed" if model.closed else "listening" if model.listener else "connected" if model.endpoint else "new"
        return f"<{model.label} {state} family={self.family!s} laddr={self.getsockname()!r}>"

    def getsockname(self) -> Any:
        model = self._model
        if model is None:
            return super().getsockname()
        if model.endpoint is not None:
            return model.endpoint.address
        if model.address is not None:
            return model.address
        return "" if model.family == socket.AF_UNIX else ("0.0.0.0", 0) if model.family == socket.AF_INET else (
            "::", 0, 0, 0)

    def getpeername(self) -> Any:
        model = self._model
        if model is None:
            return super().getpeername()
        if model.endpoint is None:
            raise OSError(errno.ENOTCONN, "Transport endpoint is not connected")
        return model.endpoint.peer_address

    # ---------------------------------------------------------- options
    def settimeout(self, value: float | None) -> None:
        if self._model is None:
            return super().settimeout(value)
        if value is not None and value < 0:
            raise ValueError("Timeout value out of range")
        self._model.timeout = None if value is None else float(value)

    def gettimeout(self) -> float | None:
        return self._model.timeout if self._model is not None else super().gettimeout()

    def setblocking(self, flag: bool) -> None:
        if self._model is None:
            return super().setblocking(flag)
        self._model.timeout = None if flag else 0.0

    def getblocking(self) -> bool:
        return self._model.timeout != 0.0 if self._model is not None else super().getblocking()

    def setsockopt(self, level: int, option: int, value: Any, *rest: Any) -> None:
        """Options change timing and buffer sizes, which the model does not have: they are remembered."""
        if self._model is None:
            return super().setsockopt(level, option, value, *rest)
        if (level, option) == (socket.SOL_SOCKET, getattr(socket, "SO_REUSEPORT", None)) and value:
            refuse("socket.setsockopt(SO_REUSEPORT)", "listeners sharing a port get connections as the kernel's hash "
                   "spreads them, which dnsse does not model; " + MODELLED)
        self._model.options[(level, option)] = value

    def getsockopt(self, level: int, option: int, *rest: Any) -> Any:
        if self._model is None:
            return super().getsockopt(level, option, *rest)
        return self._model.options.get((level, option), 0)

    # ---------------------------------------------------------- server side
    def bind(self, address: Any) -> None:
        model = self._model
        if model is None:
            return super().bind(address)
        self._point("socket.bind", "network")
        if model.address is not None or model.endpoint is not None:
            raise OSError(errno.EINVAL, "Invalid argument")
        host, port = (address, None) if model.family == socket.AF_UNIX else (address[0], address[1])
        model.address = network_of(model.execution).bind(model.family, host, port, "socket.bind")

    def listen(self, backlog: int = 0) -> None:
        model = self._model
        if model is None:
            return super().listen(backlog)
        self._point("socket.listen", "network")
        if model.endpoint is not None:
            raise OSError(errno.EINVAL, "Invalid argument")
        if model.listener is not None:
            return
        network = network_of(model.execution)
        if model.address is None:  # as Linux does: an unbound socket listens on a free port of every address
            model.address = network.bind(model.family, None, 0, "socket.listen")
        model.listener = network.listen_at(model.family, model.address)
        watch_accepts(model.execution)

    def accept(self) -> tuple[Any, Any]:
        model = self._model
        if model is None:
            return super().accept()
        listener = model.listener
        if listener is None or model.closed:
            raise OSError(errno.EINVAL if not model.closed else errno.EBADF, "Invalid argument" if not model.closed
                          else "Bad file descriptor")
        self._wait(
            "socket.accept", "network", lambda: bool(listener.backlog) or listener.closed,
            lambda: f"a connection to {model.label} at {listener.address!r} (socket.accept)", accept=listener.address,
        )
        endpoint = listener.accept()
        if endpoint is None:
            raise OSError(errno.EINVAL, "Invalid argument")
        # Its timeout is the default one, as socket.accept leaves it.
        return _connected(model.execution, model.family, endpoint), endpoint.peer_address

    # ---------------------------------------------------------- client side
    def connect(self, address: Any) -> None:
        error = self.connect_ex(address) if self._model is not None else super().connect(address)
        if error:
            raise OSError(error, _strerror(error))

    def connect_ex(self, address: Any) -> int:
        model = self._model
        if model is None:
            return super().connect_ex(address)
        self._point("socket.connect", "network")
        if model.endpoint is not None:
            return errno.EISCONN
        if model.listener is not None or model.closed:
            return errno.EINVAL if not model.closed else errno.EBADF
        if model.address is not None:
            refuse("socket.connect of a bound socket", "dnsse picks a client's own address; " + MODELLED)
        host, port = (address, None) if model.family == socket.AF_UNIX else (address[0], address[1])
        try:
            model.endpoint = network_of(model.execution).connect(model.family, host, port, "socket.connect")
        except OSError as error:
            return error.errno or errno.ECONNREFUSED
        return 0

    # ---------------------------------------------------------- data
    def send(self, data: Any, flags: int = 0) -> int:
        model = self._model
        if model is None:
            return super().send(data, flags)
        if flags:
            refuse("socket.send with flags", MODELLED)
        endpoint = self._connection()
        self._point("socket.send", endpoint.name)
        if model.write_shut:
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")
        chunk = bytes(data)
        endpoint.send(chunk)
        return len(chunk)

    def sendall(self, data: Any, flags: int = 0) -> None:
        if self._model is None:
            return super().sendall(data, flags)
        self.send(data, flags)

    def recv(self, size: int, flags: int = 0) -> bytes:
        model = self._model
        if model is None:
            return super().recv(size, flags)
        if flags:
            refuse("socket.recv with flags", MODELLED)
        if size < 0:
            raise ValueError("negative buffersize in recv")
        endpoint = self._connection()
        pipe = endpoint.inbound
        self._wait(
            "socket.recv", endpoint.name, lambda: bool(pipe.data) or pipe.eof or pipe.reset or model.read_shut,
            lambda: f"bytes on {model.label} from {endpoint.peer_address!r} (socket.recv)",
        )
        data = b"" if model.read_shut else pipe.take(size)
        if not data and pipe.reset and not model.read_shut:
            raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
        return data

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        if self._model is None:
            return super().recv_into(buffer, nbytes, flags)
        view = memoryview(buffer).cast("B")
        data = self.recv(nbytes or len(view), flags)
        view[: len(data)] = data
        return len(data)

    def shutdown(self, how: int) -> None:
        model = self._model
        if model is None:
            return super().shutdown(how)
        self._point("socket.shutdown", "network")
        if model.listener is not None and how in (socket.SHUT_RD, socket.SHUT_RDWR):
            model.listener.close()  # Linux wakes a thread blocked in accept() this way
            return
        if model.endpoint is None:
            raise OSError(errno.ENOTCONN, "Transport endpoint is not connected")
        if how in (socket.SHUT_RD, socket.SHUT_RDWR):
            model.read_shut = True
        if how in (socket.SHUT_WR, socket.SHUT_RDWR):
            model.write_shut = True
            model.endpoint.shutdown_write()

    def _real_close(self, *args: Any) -> None:
        model = self._model
        if model is None:
            return super()._real_close(*args)
        if model.closed:
            return
        model.closed = True
        if model.endpoint is not None:
            model.endpoint.close()
        elif model.listener is not None:
            model.listener.close()
        elif model.address is not None:
            network_of(model.execution).unbind(model.family, model.address)

    # ---------------------------------------------------------- helpers
    def _connection(self) -> Endpoint:
        model = self._model
        if model.closed:
            raise OSError(errno.EBADF, "Bad file descriptor")
        if model.endpoint is None:
            raise OSError(errno.ENOTCONN, "Transport endpoint is not connected")
        return model.endpoint

    def _point(self, kind: str, name: str) -> None:
        agent = current_agent()
        if agent is not None:
            agent.execution.yield_point(agent, Operation(kind, ((name, Access.SYNC),), self._model.label))

    def _wait(self, kind: str, name: str, ready: Any, describe: Any, accept: object = None) -> None:
        """Block as the socket's timeout says: forever, never (``BlockingIOError``), or up to it (``TimeoutError``)."""
        agent = current_agent()
        model = self._model
        operation = Operation(kind, ((name, Access.SYNC),), model.label)
        if model.timeout == 0.0:
            agent.execution.yield_point(agent, operation)
            if not ready():
                raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
            return
        wait = AcceptWait(ready, describe, model.timeout, accept) if accept is not None else Wait(
            ready, describe, model.timeout)
        if not agent.execution.block(agent, wait, operation):
            raise TimeoutError("timed out")


def _refusing(name: str) -> Any:
    original = getattr(_REAL, name)

    def method(self: ControlledSocket, *args: Any, **kwargs: Any) -> Any:
        if self._model is None:
            return original(self, *args, **kwargs)
        refuse(f"socket.{name} of a modelled socket", _DESCRIPTOR if name in ("fileno", "detach", "dup") else MODELLED)

    method.__name__ = name
    return method


for _name in ("fileno", "detach", "dup", "sendto", "recvfrom", "recvfrom_into", "recvmsg", "recvmsg_into", "sendmsg",
              "sendmsg_afalg", "sendfile", "get_inheritable", "set_inheritable"):
    if hasattr(_REAL, _name):
        setattr(ControlledSocket, _name, _refusing(_name))


def _new_model(execution: Any, family: int) -> _Model:
    number = runtime_for(execution).number("socket")
    site = runtime_for(execution).creation_site()
    label = f"socket#{number}" + (f" (created at {site})" if site else "")
    return _Model(execution, family, socket.SOCK_STREAM, label)


def _connected(execution: Any, family: int, endpoint: Endpoint) -> ControlledSocket:
    """The socket ``accept()`` returns: connected from the start."""
    sock = ControlledSocket.__new__(ControlledSocket)
    sock._io_refs = 0
    sock._closed = False
    sock._model = _new_model(execution, family)
    sock._model.endpoint = endpoint
    return sock


def _strerror(code: int) -> str:
    return os.strerror(code)
