"""Fan-out of published records to live subscribers: results-feed clients and consoles.

The table service publishes records (already durable) on the event-loop thread; the hub encodes each feed message
once, as the JSON text every subscriber is sent, and hands it to every subscriber of its table. A subscriber whose
server offers its socket (`dealer_ui.fanout`) and that has caught up with the log gets the message's frame, built
once, written straight to its socket: no task, queue or ASGI call per subscriber. Any other subscriber (still
reading the log, or on a server that offers no socket) gets it on its queue.

A subscriber too slow to keep up is dropped (closed 1013 with a reason) rather than slowing the table or anyone
else: more than `QUEUE_LIMIT` messages on its queue, or more than `WRITE_LIMIT` bytes its socket has not taken
(on top of what the kernel holds for it). It reconnects and resumes from the log, missing nothing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from dealer_ui.fanout import DirectSocket, text_frame
from studio.domain.feed import feed_message
from studio.domain.records import Record

QUEUE_LIMIT = 10_000
WRITE_LIMIT = 1 << 20  # bytes: about 4,000 feed messages a subscriber's socket has not taken
SLOW = 1013  # WebSocket close code "try again later": reconnect and resume from the last seq


def encode(message: dict[str, Any]) -> str:
    """A feed message as sent on the wire (the same JSON as Starlette's `send_json`)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def too_slow(limit: str) -> str:
    return f"too slow: {limit} behind; reconnect from your last seq"


class Subscription:
    """One subscriber of a table: on its queue until `FeedHub.go_direct`, then on its socket."""

    __slots__ = ("code", "dropped", "queue", "socket", "table", "transport")

    def __init__(self, table: str) -> None:
        self.table = table
        # (seq, JSON text) per message; None once the subscription is ended (see `code` and `dropped`).
        self.queue: asyncio.Queue[tuple[int, str] | None] = asyncio.Queue(QUEUE_LIMIT)
        self.socket: DirectSocket | None = None  # set once messages are written to the socket directly
        self.transport: asyncio.WriteTransport | None = None  # the socket's, kept at hand for the hot path
        self.dropped: str | None = None  # why this subscription was ended
        self.code: int | None = None  # the close code still to send; None: nothing to send (the client went away,
        # or the close frame is already written on the socket)

    def end(self, code: int | None, reason: str) -> None:
        """End the subscription now, ahead of anything still queued (the client resumes from the log). On a direct
        socket the close frame is written at once, after the frames already written."""
        if self.dropped is not None:
            return
        self.dropped = reason
        if self.socket is not None and code is not None:
            self.socket.close(code, reason)
            code = None
        self.code = code
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

    def go_direct(self, subscription: Subscription, socket: DirectSocket, last: int) -> None:
        """From now on, write the subscription's messages to `socket`: first what its queue gathered after `last`
        (the seq it has), then each message as it is published. Nothing can come between the two: both happen on
        the event loop's thread without giving it up."""
        if subscription.dropped is not None or socket.transport.is_closing():
            return  # its route is about to end it
        queue = subscription.queue
        while not queue.empty():
            item = queue.get_nowait()
            if item is not None and item[0] > last:
                socket.transport.write(text_frame(item[1]))
        subscription.socket, subscription.transport = socket, socket.transport

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
        """Hand one encoded message to every subscriber of its table: the fan-out's hot path, once per subscriber."""
        subscriptions = self._subscriptions.get(table)
        if not subscriptions:
            return
        frame: bytes | None = None  # built once, for the first subscriber on a direct socket
        item = (seq, text)
        for subscription in list(subscriptions):
            transport = subscription.transport
            if transport is None:
                try:
                    subscription.queue.put_nowait(item)
                except asyncio.QueueFull:
                    self.drop(subscription, too_slow(f"{QUEUE_LIMIT} messages"))
                continue
            if transport.is_closing():  # the client went away: its route ends the subscription
                continue
            if frame is None:
                frame = text_frame(text)
            transport.write(frame)
            if transport.get_write_buffer_size() > WRITE_LIMIT:
                self.drop(subscription, too_slow(f"{WRITE_LIMIT} bytes"))

    def drop(self, subscription: Subscription, reason: str) -> None:
        self.unsubscribe(subscription)
        subscription.end(SLOW, reason)
