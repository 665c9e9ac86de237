"""Fan-out of published records to live subscribers: results-feed clients and consoles.

The table service publishes records (already durable) on the event-loop thread; the hub encodes each feed message
once, as the JSON text every subscriber is sent, and puts it on every subscriber's queue. A subscriber too slow to
keep up is dropped (its queue closes with a reason) rather than slowing the table or anyone else; it reconnects and
resumes from the log.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from studio.domain.feed import feed_message
from studio.domain.records import Record

QUEUE_LIMIT = 10_000
SLOW = 1013  # WebSocket close code "try again later": reconnect and resume from the last seq


def encode(message: dict[str, Any]) -> str:
    """A feed message as sent on the wire (the same JSON as Starlette's `send_json`)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


@dataclass(eq=False)
class Subscription:
    table: str
    # (seq, JSON text) per message; None once the subscription is ended (see `code` and `dropped`).
    queue: asyncio.Queue[tuple[int, str] | None] = field(default_factory=lambda: asyncio.Queue(QUEUE_LIMIT))
    dropped: str | None = None  # why this subscription was ended
    code: int | None = None  # the WebSocket close code to send; None: the client went away, nothing to send

    def end(self, code: int | None, reason: str) -> None:
        """End the subscription now, ahead of anything still queued (the client resumes from the log)."""
        if self.dropped is not None:
            return
        self.code, self.dropped = code, reason
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)


class FeedHub:
    def __init__(self, enrich: Callable[[Record, dict[str, Any]], None] | None = None) -> None:
        self.enrich = enrich  # adds what a feed message needs beyond its record (the roads of a result)
        self.forward: Callable[[str, int, str], None] | None = None  # also hands each message on (to Redis)
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
            if self.enrich is not None:
                self.enrich(record, message)
            text = encode(message)  # encoded once, whatever the number of subscribers
            self.deliver(record.stream, record.seq, text)
            if self.forward is not None:
                self.forward(record.stream, record.seq, text)

    def deliver(self, table: str, seq: int, text: str) -> None:
        """Hand one encoded message to every subscriber of its table."""
        item = (seq, text)
        for subscription in list(self._subscriptions.get(table, ())):
            try:
                subscription.queue.put_nowait(item)
            except asyncio.QueueFull:
                self.unsubscribe(subscription)
                subscription.end(SLOW, f"too slow: {QUEUE_LIMIT} messages behind; reconnect from your last seq")
