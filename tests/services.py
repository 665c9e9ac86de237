"""Throwaway PostgreSQL and Redis servers for the scale-out tests: the real servers from Debian's packages
(`postgresql`, `redis-server`; scripts/ensure-system installs them), each in its own temporary folder on a free
loopback port, started and stopped by the test run itself.

PostgreSQL refuses to run as root, so when the tests run as root the server runs as the `postgres` account the
Debian package creates (through `setpriv`), in a folder handed to that account. Both servers can be stopped and
started again on the same port and data, which is how the fault tests take a database or Redis away and back.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

START_TIMEOUT = 30.0


_PORTS_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A loopback port free now and never handed out before by this process: a port is only probed, so two calls made
    before either server binds could otherwise get the same one (a studio and its demo game server once did, and the
    studio answered both)."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in _PORTS_HANDED_OUT:
            _PORTS_HANDED_OUT.add(port)
            return port


def _wait_for_port(port: int, process: subprocess.Popen[bytes], name: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}: {log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not listen on port {port} within {START_TIMEOUT} s")


def _stop(process: subprocess.Popen[bytes] | None, sig: int = signal.SIGTERM) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def postgres_bin() -> Path | None:
    """The newest Debian PostgreSQL server's bin folder, if one is installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


class PostgresServer:
    """A PostgreSQL cluster in `folder`, listening on 127.0.0.1:`port` with trust authentication for user `studio`.
    Tests run it without fsync (a crash of the server is not what they test); `durable=True` keeps PostgreSQL's
    defaults, for benchmarks."""

    def __init__(self, folder: Path, durable: bool = False) -> None:
        self.durable = durable
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise RuntimeError("no PostgreSQL server: run scripts/ensure-system (installs Debian's postgresql)")
        self.bin = bin_dir
        self.folder = folder
        self.data = folder / "data"
        self.log = folder / "postgres.log"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._as_user: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL will not run as root: hand the folder to the package's account
            account = pwd.getpwnam("postgres")
            # pytest's own temporary folders are private to root: the cluster lives in a folder of its own.
            self.folder = folder = Path(tempfile.mkdtemp(prefix="studio-postgres-"))
            self.data, self.log = folder / "data", folder / "postgres.log"
            os.chown(folder, account.pw_uid, account.pw_gid)
            self._as_user = ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--clear-groups"]
        subprocess.run(
            [*self._as_user, str(self.bin / "initdb"), "-D", str(self.data), "-U", "studio", "--auth=trust",
             "-E", "UTF8", "--locale=C.UTF-8"],
            check=True, capture_output=True,
        )  # fmt: skip

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [*self._as_user, str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port),
                 "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.folder}",
                 "-c", f"fsync={'on' if self.durable else 'off'}", "-c", "max_connections=200"],
                stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        _wait_for_port(self.port, self.process, "postgres", self.log)
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            ready = subprocess.run([str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                                   capture_output=True, check=False)  # fmt: skip
            if ready.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("postgres did not become ready")

    def stop(self) -> None:
        _stop(self.process, signal.SIGINT)  # "fast" shutdown: clients are disconnected at once
        self.process = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://studio@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh empty database on this server; its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        subprocess.run([str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "studio", name],
                       check=True, capture_output=True)  # fmt: skip
        return self.url(name)

    def copy_database(self, template_url: str) -> str:
        """A fresh copy of another database of this server (which nobody may be connected to); its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        template = template_url.rsplit("/", 1)[1]
        subprocess.run([str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "studio",
                        "-T", template, name], check=True, capture_output=True)  # fmt: skip
        return self.url(name)


class RedisServer:
    """A Redis server on 127.0.0.1:`port`, nothing persisted: a restart starts empty, as after losing the server."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / "redis.log"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        executable = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(executable).exists():
            raise RuntimeError("no redis-server: run scripts/ensure-system (installs Debian's redis-server)")
        self.executable = executable

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", str(self.folder)],
                stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        _wait_for_port(self.port, self.process, "redis-server", self.log)

    def stop(self) -> None:
        _stop(self.process)
        self.process = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"
