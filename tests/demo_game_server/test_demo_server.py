"""The demo game server as `studio run` starts it in demo mode: a client of the studio's public API like any other (its
own API key, kept and reused across restarts; its players funded by deposits), relaying the studio's refusals word for
word, and never in the studio's way (its port taken, the studio runs on; `--no-demo`, no demo server)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from studio.clock import SystemClock
from studio.users import UserStore
from studio.wallets import WalletStore
from tests.browser.support import REPO
from tests.services import free_port

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def studio_run(folder: Path, *extra: str) -> Iterator[tuple[str, str, Path]]:
    port, demo_port = free_port(), free_port()
    log = folder / f"server-{port}.log"
    command = [sys.executable, "-m", "studio_cli.main", "run", "--port", str(port), "--demo-port", str(demo_port),
               "--database", str(folder / "studio.db"), *extra]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log.read_text(errors="replace")
            with contextlib.suppress(OSError), urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1):
                break
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", f"http://127.0.0.1:{demo_port}", log
    finally:
        process.terminate()
        process.wait(timeout=15)


def call(url: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def wait_for(url: str) -> None:
    deadline = time.monotonic() + 15
    while True:
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=1):
            return
        assert time.monotonic() < deadline, f"{url} never answered"
        time.sleep(0.1)


def test_the_demo_is_a_game_server_with_its_own_key_and_relays_the_studios_refusals(tmp_path: Path) -> None:
    with studio_run(tmp_path) as (_, demo, _log):
        wait_for(f"{demo}/api/players")
        status, ana = call(f"{demo}/api/players/demo-ana")
        assert status == 200
        assert (ana["balance"], ana["points"], ana["bets"]) == (500_000, 0, [])
        # No round is open: the studio refuses, and the page gets its status and reason as they are.
        bet = {"player": "demo-ana", "bets": [{"bet_type": "player", "stake": 1000}]}
        status, answer = call(f"{demo}/api/tables/T1/bets", bet)
        assert status == 200
        [refused] = answer["answers"]
        assert refused["status"] == 409 and "betting" in refused["refused"], refused
        assert call(f"{demo}/api/players/nobody") == (404, {"detail": "no demo player 'nobody'; the demo's players "
                                                          "are demo-ana, demo-ben, demo-cleo, demo-dev"})  # fmt: skip
        with urllib.request.urlopen(f"{demo}/static/player.html", timeout=5) as page:
            status, headers, html = page.status, dict(page.headers), page.read().decode()
        assert status == 200 and "script-src" not in headers["content-security-policy"]  # default-src 'self'
        assert "<script src=" in html and "<script>" not in html and " onclick=" not in html  # no inline script
    key = (tmp_path / "demo-game-server.key").read_text().strip()
    users = UserStore(f"sqlite:///{tmp_path / 'studio.db'}", SystemClock())
    wallets = WalletStore(f"sqlite:///{tmp_path / 'studio.db'}", SystemClock())
    try:
        principal = users.principal_for_api_key(key)
        assert principal is not None and principal.name == "demo-game-server"
        assert wallets.owner("demo-ana") == "demo-game-server"  # funded through its own key's deposit
        assert [entry["kind"] for entry in wallets.entries("demo-ana")] == ["deposit"]
        # A restart reuses the key (no new one), and a player already funded is not funded again.
        with studio_run(tmp_path) as (_, demo, _log):
            wait_for(f"{demo}/api/players")
            assert call(f"{demo}/api/players/demo-ana")[1]["balance"] == 500_000
        assert [name for name, _ in users.api_keys()] == ["demo-game-server"]
        assert [entry["kind"] for entry in wallets.entries("demo-ana")] == ["deposit"]
    finally:
        users.close()
        wallets.close()


def test_a_taken_demo_port_leaves_the_studio_running(tmp_path: Path) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        with studio_run(tmp_path, "--demo-port", str(taken)) as (studio, _, log):
            deadline = time.monotonic() + 10
            while "the demo game server could not start" not in log.read_text(errors="replace"):
                assert time.monotonic() < deadline, log.read_text(errors="replace")
                time.sleep(0.1)
            with urllib.request.urlopen(f"{studio}/readyz", timeout=5) as ready:
                assert ready.status == 200


def test_no_demo_means_no_demo_server(tmp_path: Path) -> None:
    with studio_run(tmp_path, "--no-demo") as (_, demo, log):
        with pytest.raises(OSError):
            urllib.request.urlopen(f"{demo}/api/players", timeout=2)
        assert "Demo game server" not in log.read_text(errors="replace")
    assert not (tmp_path / "demo-game-server.key").exists()
