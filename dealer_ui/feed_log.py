"""The results feed read from the log: what a client resuming from a seq is sent, and what a feed server sends when
Redis cannot. The same messages, byte for byte, as those published live (a result carries its shoe's roads as they
stood after it, computed from the log)."""

from __future__ import annotations

import threading
from typing import Any

from studio.domain.feed import compact_roads, feed_message
from studio.domain.log_views import RoundIndex
from studio.domain.records import Record
from studio.domain.roads import compute_roads
from studio.ports import EventStore


class LogFeed:
    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.round_indexes: dict[str, RoundIndex] = {}  # per table, built lazily from the log
        self._lock = threading.RLock()  # the event loop and the routes' worker threads both read through here

    def round_index(self, table_id: str) -> RoundIndex:
        """The table's round index, brought up to date with what the log gained since the last look."""
        with self._lock:
            index = self.round_indexes.setdefault(table_id, RoundIndex(table_id))
            index.update(self.store.read(table_id, after=index.seq))
            return index

    def with_roads(self, record: Record, message: dict[str, Any]) -> None:
        """A result on the feed carries the roads of its shoe as they stand after it."""
        if message.get("type") != "result":
            return
        with self._lock:
            index = self.round_index(record.stream)
            summary = index.find(str(message["game_id"]))
            if summary is not None:
                roads = compute_roads(index.shoe_results(summary["shoe"], summary["game_id"])).to_json()
                message["roads"] = compact_roads(roads)  # a feed message goes to every subscriber: keep it small

    def message(self, record: Record) -> dict[str, Any] | None:
        """The feed message of a record, or None for what the feed does not show."""
        message = feed_message(record)
        if message is not None:
            self.with_roads(record, message)
        return message

    def backlog(self, table: str, after: int, up_to: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        """Feed messages of records after `after` up to `up_to` (what may be published), at most `limit` of them;
        and the seq read up to, to continue from."""
        messages: list[dict[str, Any]] = []
        read_up_to = after
        for record in self.store.read(table, after=after):
            if record.seq > up_to or len(messages) >= limit:
                break
            read_up_to = record.seq
            message = self.message(record)
            if message is not None:
                messages.append(message)
        return messages, read_up_to
