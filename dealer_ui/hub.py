"""Fan-out of published records to live subscribers: results-feed clients and consoles.

The table service publishes records (already durable) on the event-loop thread; the hub puts each feed message on
every subscriber's queue. A subscriber too slow to keep up is dropped (its queue closes with a reason) rather than
slowing the table or anyone else; it reconnects and resumes from the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from studio.feed import feed_message
from studio.ports import Record

QUEUE_LIMIT = 10_000


@dataclass(eq=False)
class Subscription:
    table: str
    queue: asyncio.Queue[dict[str, Any] | None] = field(default_factory=lambda: asyncio.Queue(QUEUE_LIMIT))
    dropped: str | None = None  # why the hub let go of this subscriber


class FeedHub:
    def __init__(self) -> None:
        self._subscriptions: dict[str, set[Subscription]] = {}
        self.changed: dict[str, asyncio.Event] = {}  # consoles wait on this to refresh the table's state

    def subscribe(self, table: str) -> Subscription:
        subscription = Subscription(table)
        self._subscriptions.setdefault(table, set()).add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscriptions.get(subscription.table, set()).discard(subscription)

    def subscribers(self, table: str) -> int:
        return len(self._subscriptions.get(table, ()))

    def publish(self, records: Sequence[Record]) -> None:
        for record in records:
            message = feed_message(record)
            if message is None:
                continue
            for subscription in list(self._subscriptions.get(record.stream, ())):
                try:
                    subscription.queue.put_nowait(message)
                except asyncio.QueueFull:
                    self._drop(subscription, f"too slow: {QUEUE_LIMIT} messages behind; reconnect from your last seq")

    def _drop(self, subscription: Subscription, reason: str) -> None:
        self.unsubscribe(subscription)
        subscription.dropped = reason
        while not subscription.queue.empty():  # the client resumes from the log; make room for the goodbye
            subscription.queue.get_nowait()
        subscription.queue.put_nowait(None)
