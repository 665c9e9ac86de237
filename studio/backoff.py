"""Capped exponential backoff: the reconnect policy, in one place for every source."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Backoff:
    initial: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    _next: float | None = None

    def next_delay(self) -> float:
        """The delay before the next attempt: initial, then growing by `factor`, never above `cap`."""
        delay = self.initial if self._next is None else self._next
        self._next = min(delay * self.factor, self.cap)
        return min(delay, self.cap)

    def reset(self) -> None:
        self._next = None
