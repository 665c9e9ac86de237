"""Real processes for the scale-out tests: `studio run` (a table process) and `studio feed` (feed servers), started
from the installed command line, and a dealer driving a table through the API as the console would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.api_client import ApiClient
from tests.services import free_port

STUDIO = [sys.executable, "-m", "studio_cli.main"]
TABLE_TOML = """\
[table]
id = "T1"

[procedure]
allow_early_close = true
"""


class Process:
    """A studio process on a free port; its output goes to a file in `folder`, shown when something fails."""

    def __init__(self, name: str, args: list[str], folder: Path) -> None:
        self.name, self.args, self.folder = name, args, folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            command = [*STUDIO, *self.args, "--port", str(self.port)]
            environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited: {self.output()}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"{self.name} did not answer: {self.output()}")

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind, as a crash or a power cut would leave it."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


ACTIONS = {"awaiting_shuffle": "shuffle", "awaiting_cut": "cut", "ready": "open-betting",
           "betting_open": "close-betting", "burning": "simulator/draw", "dealing": "simulator/draw"}  # fmt: skip


def step(dealer: ApiClient, table: str = "T1") -> str:
    """One dealer action, whatever the table needs next (the simulated shoe slides a card out when one is due);
    returns the phase it was taken in."""
    view = dealer.call("GET", f"/api/tables/{table}")
    phase = view["phase"]
    action = ACTIONS.get(phase)
    if action is not None:
        dealer.call("POST", f"/api/tables/{table}/{action}", {} if action == "cut" else None, ok=(409,))
    if action == "simulator/draw":  # the card travels through the pty and the driver: wait until it is logged
        deadline = time.monotonic() + 10
        while dealer.call("GET", f"/api/tables/{table}")["seq"] == view["seq"] and time.monotonic() < deadline:
            time.sleep(0.01)
    return str(phase)
