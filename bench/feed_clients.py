"""What the feed benchmark and the load test share: the real server as a child process, cheap WebSocket clients.

`studio_server` starts `studio run` (uvicorn) on a free loopback port with SQLite in a given folder and stops it at
the end, also when the script is interrupted; the child dies with the script even if the script is killed outright.
`WebSocketClient` is one WebSocket connection run by the `websockets` library's sans-I/O protocol on a plain asyncio
transport: a thousand of them cost a client process little, so the figures measured are the server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

import httpx2
from websockets.client import ClientProtocol
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.uri import parse_uri

from studio.clock import SystemClock
from studio.settings import sqlite_url
from studio.users import UserStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.services, the tests' own free ports
from tests.services import free_port

PR_SET_PDEATHSIG = 1  # Linux prctl: a signal the child receives when its parent dies
Client = TypeVar("Client", bound="WebSocketClient")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop for the clients when it is there (uvicorn[standard] brings it; `studio feed` serves on it too)."""
    try:
        import uvloop  # noqa: PLC0415 - optional
    except ImportError:
        return None
    return uvloop.new_event_loop


def raise_open_files(needed: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of a process so far (Linux /proc), or None where that cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int | None = None) -> float | None:
    """Resident memory of a process (default: this one) in MB (Linux /proc VmRSS), or None where it cannot be read."""
    try:
        status = Path(f"/proc/{pid or 'self'}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def create_api_keys(database: str, names: Sequence[str]) -> list[str]:
    """Game servers' API keys, created on the database before the server starts."""
    users = UserStore(sqlite_url(database), SystemClock())
    try:
        return [users.add_api_key(name) for name in names]
    finally:
        users.close()


# The server.


@dataclass
class StudioServer:
    process: subprocess.Popen[bytes]
    base: str  # http://127.0.0.1:PORT
    log: Path

    @property
    def ws_base(self) -> str:
        return self.base.replace("http://", "ws://")

    def exited(self) -> str | None:
        """Why the server is gone (with the end of its log), or None while it runs."""
        if self.process.poll() is None:
            return None
        return f"the server exited ({self.process.returncode}):\n{self.log.read_text(errors='replace')[-2000:]}"


def _die_with_parent() -> None:
    """In the child, before exec: the kernel sends it SIGTERM if this script dies, however it dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def wait_for_server(server: StudioServer, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reason = server.exited()
        if reason is not None:
            raise RuntimeError(reason)
        with contextlib.suppress(httpx2.HTTPError):
            if httpx2.get(f"{server.base}/api/me", timeout=1).status_code == 401:
                return
        time.sleep(0.1)
    raise RuntimeError(f"the server did not answer within {timeout} s:\n{server.log.read_text()[-2000:]}")


def stop_process(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM (uvicorn shuts down cleanly: the tables stop their simulated shoes), then SIGKILL after `grace`."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def studio_server(
    work: Path, database: str, table_files: Sequence[Path], extra_args: Sequence[str] = ()
) -> Iterator[StudioServer]:
    """`studio run` on a free loopback port, its log and temporary files (the simulated shoes' pty links) in `work`;
    yields once it answers and stops it when the block ends, however it ends."""
    port = free_port()
    command = [sys.executable, "-m", "studio_cli.main", "run", "--host", "127.0.0.1", "--port", str(port),
               "--database", database, *(arg for path in table_files for arg in ("--table", str(path))),
               *extra_args]  # fmt: skip
    log = work / "server.log"
    environment = {**os.environ, "TMPDIR": str(work)}
    with log.open("wb") as output:  # started before the scripts start any thread, so preexec_fn is safe here
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, cwd=work, env=environment,
                                   preexec_fn=_die_with_parent)  # fmt: skip  # noqa: PLW1509
    server = StudioServer(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_for_server(server)
        yield server
    finally:
        stop_process(process)


# WebSocket clients.


class WebSocketClient(asyncio.Protocol):
    """One WebSocket connection: the `websockets` protocol (sans I/O) on an asyncio transport. A text message's
    arrival is taken when its bytes are handed over by the socket, before any other client work, so the figures are
    the server's and the network's, not this client's scheduling of many connections. Subclasses say what to do with
    each text message (`text_received`) and with the end of the connection (`ended`).

    After the handshake, when no extension was negotiated, the frames are split here: a whole text frame (the feed's
    every message) is cut out of the bytes in a few operations and handed over as it is; any other frame (the
    server's pings, its close) goes to the library's protocol, which answers it. With 5,000 connections in one
    process, the library's parser on every message would make the client, not the server, the slower side."""

    clock: Callable[[], float] = time.perf_counter  # the clock of arrival times

    def __init__(self, url: str, headers: dict[str, str], compression: bool = False) -> None:
        extensions = [ClientPerMessageDeflateFactory()] if compression else None
        self.protocol = ClientProtocol(parse_uri(url), extensions=extensions)
        self.headers = headers
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed: str | None = None  # why the server closed the connection, if it did
        self.close_code: int | None = None
        self._response = b""  # the handshake's response, until it is whole
        self._split = False  # whole text frames are cut out here (see the class)
        self._partial = b""  # the start of a frame whose end has not come yet

    def text_received(self, arrived: float, data: bytes) -> None:
        """One text message, with the time its bytes arrived."""

    def ended(self, exc: Exception | None) -> None:
        """The connection is gone (after the handshake)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass asyncio's
        request = self.protocol.connect()
        for name, value in self.headers.items():
            request.headers[name] = value
        self.protocol.send_request(request)
        self._flush()

    def data_received(self, data: bytes) -> None:
        arrived = self.clock()
        if self._split:
            self._frames(arrived, self._partial + data if self._partial else data)
            return
        if not self.opened.done():
            self._response += data
            end = self._response.find(b"\r\n\r\n")
            if end < 0:
                return
            data, rest = self._response[: end + 4], self._response[end + 4 :]
            self._protocol_data(arrived, data)  # the response: the handshake is done, or refused
            accepted = self.opened.done() and self.opened.exception() is None
            self._split = accepted and not self.protocol.extensions
            if self._split:
                self._frames(arrived, rest)
                return
            data = rest
        self._protocol_data(arrived, data)

    def _frames(self, arrived: float, data: bytes) -> None:
        """Whole text frames handed over; other whole frames to the protocol; the start of a frame kept."""
        start, size = 0, len(data)
        while size - start >= 2:
            first, length = data[start], data[start + 1]
            if length & 0x80:  # a masked frame: the protocol fails the connection as it must
                self._protocol_data(arrived, data[start:])
                start = size
                break
            header = 2
            if length == 126:
                header, length = 4, int.from_bytes(data[start + 2 : start + 4], "big")
            elif length == 127:
                header, length = 10, int.from_bytes(data[start + 2 : start + 10], "big")
            end = start + header + length
            if end > size:
                break
            if first == 0x81:  # FIN and text: a whole message
                self.text_received(arrived, data[start + header : end])
            else:
                self._protocol_data(arrived, data[start:end])
            start = end
        self._partial = data[start:]

    def _protocol_data(self, arrived: float, data: bytes) -> None:
        self.protocol.receive_data(data)
        for event in self.protocol.events_received():
            if isinstance(event, Frame):
                if event.opcode is Opcode.TEXT:
                    self.text_received(arrived, bytes(event.data))
                elif event.opcode is Opcode.CLOSE:
                    self.close_code = self.protocol.close_code
                    self.closed = f"closed by the server: {self.protocol.close_code} {self.protocol.close_reason}"
            elif not self.opened.done():  # the handshake's response
                if self.protocol.handshake_exc is not None:
                    self.opened.set_exception(self.protocol.handshake_exc)
                else:
                    self.opened.set_result(None)
        self._flush()  # pongs to the server's keepalive pings, the close handshake

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError(f"lost before the handshake: {exc}"))
        else:
            self.ended(exc)

    def close(self) -> None:
        if self.protocol.state is State.OPEN:
            self.protocol.send_close(1000, "done")
            self._flush()
        if self.transport is not None:
            self.transport.close()

    def _flush(self) -> None:
        assert self.transport is not None
        output = self.protocol.data_to_send()
        if output and not self.transport.is_closing():
            self.transport.write(b"".join(output))


async def connect(factory: Callable[[], Client], url: str, timeout: float = 30.0) -> Client:
    """Open one client connection and wait for its handshake."""
    uri = parse_uri(url)
    _, client = await asyncio.get_running_loop().create_connection(factory, uri.host, uri.port)
    try:
        await asyncio.wait_for(client.opened, timeout)
    except BaseException:
        client.close()
        raise
    return client


async def open_clients(factories: Sequence[tuple[Callable[[], Client], str]], batch: int = 100) -> list[Client]:
    """Open many connections, `batch` handshakes at a time (the server's accept queue stays short)."""
    clients: list[Client] = []
    for start in range(0, len(factories), batch):
        clients += await asyncio.gather(*(connect(factory, url) for factory, url in factories[start : start + batch]))
    return clients
