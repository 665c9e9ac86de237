"""Waiting for a condition with a deadline, instead of sleeping a fixed time and hoping it was long enough.

A test that sleeps, then asserts, fails on a busy machine and wastes time on a quiet one; these poll the condition
often and fail with what was awaited once the deadline passes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

POLL = 0.01  # seconds between two looks at the condition


async def until(condition: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    """Return as soon as `condition()` is true; fail the test after `timeout` seconds, naming `what` was awaited."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(POLL)


def wait_until(condition: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    """`until` for code outside an event loop."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(POLL)
