"""Clocks: the only source of time, injected everywhere. Always timezone-aware UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to: for simulations and tests."""

    def __init__(self, start: datetime) -> None:
        if start.utcoffset() != timedelta(0):
            raise ValueError(f"a clock runs on UTC, got {start.isoformat()}")
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time does not run backwards")
        self._now += timedelta(seconds=seconds)
