"""Fuzz tests may not hang: one that runs far past its budget ends the run, printing where every thread was.

A hang inside C code (a huge exact number being built, a decoder loop) ignores Python's signals, so the watchdog is
faulthandler's own thread, which exits the process; a hang then fails the run instead of blocking it for ever.

test_openapi.py runs against the server tests' studio: their fixtures are imported here.
"""

from __future__ import annotations

import faulthandler
from collections.abc import Iterator

import pytest

from tests.fuzz.support import SCALE
from tests.server.conftest import app, cheap_password_hashing, client, clock, game_server, studio  # noqa: F401

HANG_SECONDS = 120  # per test; the slowest takes a few seconds


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    faulthandler.dump_traceback_later(HANG_SECONDS * SCALE, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()
