"""Fixtures of the browser tests: the real studio server in a subprocess and Debian's Chromium driven by Playwright.

Chromium is Debian's package at /usr/bin/chromium (scripts/ensure-system installs it with apt when missing), launched
with `executable_path`: `playwright install` would download a browser build, which the build machines cannot do.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Playwright, expect, sync_playwright

from tests.browser.support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    REPO,
    TABLE_TOML,
    TIMEOUT_MS,
    VIEWPORT,
    StudioServer,
)
from tests.services import free_port


def _log_tail(path: Path) -> str:
    return path.read_text(errors="replace")[-4000:] if path.exists() else "(no log)"


@pytest.fixture(scope="module")
def studio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StudioServer]:
    """`studio run` on a free port with a fresh SQLite file: demo mode (the default), one table T1 on the simulated
    shoe with a 3 s betting timer, no --auto-deal: a card comes out only when a test presses "draw"."""
    folder = tmp_path_factory.mktemp("studio")
    table = folder / "t1.toml"
    table.write_text(TABLE_TOML)
    with running_studio(folder, table) as server:
        yield server


@contextlib.contextmanager
def running_studio(folder: Path, table_file: Path) -> Iterator[StudioServer]:
    """`studio run` on a free port with `folder/studio.db` and `table_file`, until the block ends; in demo mode, so
    with the demo game server too, on a free port of its own (never the 8001 a studio on this machine may hold)."""
    port, demo_port = free_port(), free_port()
    log = folder / "server.log"
    command = [sys.executable, "-m", "studio_cli.main", "run", "--port", str(port), "--demo-port", str(demo_port),
               "--database", str(folder / "studio.db"), "--table", str(table_file)]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ))
    url, demo_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{demo_port}"
    try:
        deadline = time.monotonic() + 30
        for ready in (f"{url}/static/index.html", f"{demo_url}/api/players"):
            while True:
                if process.poll() is not None:
                    pytest.fail(f"the studio server exited with {process.returncode}:\n{_log_tail(log)}")
                with contextlib.suppress(OSError), urllib.request.urlopen(ready, timeout=1) as answer:
                    if answer.status == 200:
                        break
                if time.monotonic() > deadline:
                    pytest.fail(f"the studio server did not answer within 30 s:\n{_log_tail(log)}")
                time.sleep(0.1)
        yield StudioServer(url, log, demo_url=demo_url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        subprocess.run([str(REPO / "scripts" / "ensure-system")], check=False)
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing and scripts/ensure-system could not install Debian's chromium")
    expect.set_options(timeout=TIMEOUT_MS)
    launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield launched
    launched.close()


@pytest.fixture
def new_context(browser: Browser) -> Iterator[Callable[[], BrowserContext]]:
    """Separate browser contexts (own cookies, so own sign-in) for each person in a test; closed at its end."""
    contexts: list[BrowserContext] = []

    def make() -> BrowserContext:
        context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        with contextlib.suppress(Exception):
            context.close()
