"""The results feed across processes, through Redis Streams.

Table processes (`studio run --redis URL`) append to the log first, as always; each feed message they publish is then
handed to a `RedisForwarder`, which adds it to the table's stream `studio:feed:{table}` with the record's seq as the
entry id (`{seq}-0`): Redis itself refuses an entry twice, so what is replayed after a reconnect is never duplicated.
Each entry also carries `prev`, the seq of the table's previous feed message (-1 when the forwarder does not know it),
so a reader can tell when it missed something.

Feed servers (`studio feed`, any number, stateless) run a `RedisFeedServer`: one reader follows the streams of the
tables their clients ask for and hands each message to the same hub and WebSocket routes as the studio's own. A client
resumes from the log (the database), as it does from the studio.

Redis down degrades the feed only: the tables keep logging (the forwarder's failures never reach them); the forwarder
retries every second and, once Redis answers, adds from the log whatever was published meanwhile; the feed servers
meanwhile read the log themselves (every half second, holding back what a suspension holds back, as the table does)
and go back to Redis when it answers. A gap in what Redis holds (it restarted empty, or dropped old entries) is filled
from the log. Nothing is lost, nothing is sent twice: a subscriber gets every message once, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from dealer_ui.feed_log import LogFeed
from dealer_ui.hub import FeedHub, encode
from studio.access import ACCESS_STREAM
from studio.domain.errors import ConfigError
from studio.domain.feed import PublicationFrontier
from studio.domain.records import Record, StoreError
from studio.ports import EventStore

log = logging.getLogger(__name__)

RETAIN = 10_000  # entries kept per table stream (approximately); older ones are served from the log
RETRY = 1.0  # seconds between two attempts to reach Redis
POLL = 0.5  # seconds between two reads of the log while Redis is down (feed servers)
PENDING_LIMIT = 50_000  # messages waiting for Redis before the forwarder gives up on them and resyncs from the log
PAGE = 1_000
BLOCK_MS = 1_000  # how long one XREAD waits for new entries
ANNOUNCE_REFRESH = 1.0  # seconds between two reads of the announced tables
DUPLICATE = "equal or smaller than the target stream top item"  # Redis's refusal of an id it already has


TABLES_KEY = "studio:tables"  # the set of table ids the table processes announce, so that feed servers know them early


def stream_key(table: str) -> str:
    return f"studio:feed:{table}"


async def top_seq(redis: Redis, table: str) -> int | None:
    """The seq of the last entry of the table's stream, or None if Redis holds none."""
    top: Any = await redis.xrevrange(stream_key(table), count=1)
    return int(top[0][1]["seq"]) if top else None


def read_after(store: EventStore, table: str, after: int) -> list[Record]:
    return list(store.read(table, after=after))


def connect(url: str) -> Redis:
    """A client that fails fast: a down Redis costs seconds, not minutes, before the fallback takes over. A URL that
    is not a Redis URL is a `ConfigError` now, not a failure later."""
    try:
        client: Redis = Redis.from_url(url, decode_responses=True, socket_timeout=5, socket_connect_timeout=2)
    except ValueError as error:
        raise ConfigError(f"Redis URL {url!r}: {error}") from None
    return client


class RedisForwarder:
    """Adds every published feed message of this process's tables to their Redis streams (see the module)."""

    def __init__(self, url: str, log_feed: LogFeed, published_seq: Callable[[str], int], tables: Iterable[str]) -> None:
        self.redis = connect(url)
        self.log_feed = log_feed
        self.published_seq = published_seq
        self.tables = list(tables)
        self.pending: deque[tuple[str, int, str]] = deque()
        self.last: dict[str, int] = {}  # per table, the seq of the last message known to be in Redis
        self.up = False
        self.error: str | None = None
        self._wake = asyncio.Event()
        self._resync = True

    def forward(self, table: str, seq: int, text: str) -> None:
        """Called as the table publishes (never blocks, never fails): queued for the next push."""
        if len(self.pending) >= PENDING_LIMIT:  # Redis has not kept up: take it all from the log instead
            self.pending.clear()
            self._resync = True
        self.pending.append((table, seq, text))
        self._wake.set()

    async def run(self) -> None:
        while True:
            try:
                if self._resync:
                    self._resync = False
                    await self.redis.sadd(TABLES_KEY, *self.tables)
                    for table in self.tables:
                        await self._sync(table)
                    if not self.up:
                        log.info("results feed: Redis answers; the tables' streams are up to date")
                    self.up, self.error = True, None
                await self._wake.wait()
                self._wake.clear()
                batch = list(self.pending)
                self.pending.clear()
                await self._push(batch)
            except (RedisError, OSError, StoreError) as error:
                if self.up or self.error is None:
                    log.warning("results feed: Redis unavailable (%s); the log keeps everything, retrying", error)
                self.up, self.error = False, str(error)
                self.pending.clear()  # taken from the log once Redis answers
                self._resync = True
                await asyncio.sleep(RETRY)

    async def _sync(self, table: str) -> None:
        """Add to the table's stream what the log published after what the stream (or this process) last had."""
        top = await top_seq(self.redis, table)
        if top is not None:  # what Redis holds is the truth; without a stream, go on from what this process pushed
            self.last[table] = top
        # A stream new to this process starts with what comes next; `prev` of its first entry is that position.
        after = self.last.setdefault(table, self.published_seq(table))
        while True:
            up_to = self.published_seq(table)
            messages, read_up_to = await asyncio.to_thread(self.log_feed.backlog, table, after, up_to, PAGE)
            await self._push([(table, int(message["seq"]), encode(message)) for message in messages])
            if read_up_to >= up_to or read_up_to == after:
                return
            after = read_up_to

    async def _push(self, batch: list[tuple[str, int, str]]) -> None:
        if not batch:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for table, seq, text in batch:
                prev = self.last.get(table, -1)
                fields: dict[Any, Any] = {"seq": seq, "prev": prev, "msg": text}
                pipe.xadd(stream_key(table), fields, id=f"{seq}-0", maxlen=RETAIN, approximate=True)
                self.last[table] = max(seq, self.last.get(table, 0))
            results = await pipe.execute(raise_on_error=False)
        for result in results:
            if isinstance(result, ResponseError) and DUPLICATE not in str(result):
                raise result
            if isinstance(result, Exception) and not isinstance(result, ResponseError):
                raise result

    async def close(self) -> None:
        await self.redis.aclose()


@dataclass
class Tailer:
    """What a feed server knows of one table: the position up to which its messages were handed to the hub (all
    published), and, while it reads the log itself, the log's publication frontier and what it holds back."""

    delivered: int
    frontier: PublicationFrontier | None = None
    scanned: int = 0
    held: list[tuple[int, str]] = field(default_factory=list)


class RedisFeedServer:
    """A `FeedBackend` (dealer_ui/routes/feed.py) for a stateless feed server: Redis first, the log when it must."""

    def __init__(self, store: EventStore, redis_url: str) -> None:
        self.store = store
        self.log_feed = LogFeed(store)
        self.redis = connect(redis_url)
        self.hub = FeedHub()
        self.tailers: dict[str, Tailer] = {}
        self.redis_up = True
        self.error: str | None = None
        self._known: set[str] = set()
        self._wake = asyncio.Event()

    # FeedBackend.

    def has_table(self, table_id: str) -> bool:
        """A table announced in Redis by its process, or one with records in the log."""
        if table_id in self._known:
            return True
        self._known |= set(self.store.streams()) - {ACCESS_STREAM}  # a table that started since the last look
        return table_id in self._known

    async def follow(self, table_id: str) -> None:
        if table_id in self.tailers:
            return
        start = await self._start(table_id)
        self.tailers.setdefault(table_id, Tailer(start))
        self._wake.set()

    def published_seq(self, table_id: str) -> int:
        return self.tailers[table_id].delivered

    def backlog(self, table_id: str, after: int, limit: int) -> tuple[list[dict[str, Any]], int]:
        return self.log_feed.backlog(table_id, after, self.published_seq(table_id), limit)

    # Reading.

    async def _start(self, table: str) -> int:
        """Where to start following a table: the top of its stream (published by definition), or, without one, how
        far the log may be published."""
        if self.redis_up:
            with contextlib.suppress(RedisError, OSError):
                top = await top_seq(self.redis, table)
                if top is not None:
                    return top
        frontier = PublicationFrontier()
        for record in await asyncio.to_thread(read_after, self.store, table, 0):
            frontier.advance(record.seq, record.kind)
        return frontier.published

    async def run(self) -> None:
        while True:
            if self.redis_up:
                try:
                    await self._read_redis()
                except (RedisError, OSError) as error:
                    log.warning("feed server: Redis unavailable (%s); serving from the log", error)
                    self.redis_up, self.error = False, str(error)
            else:
                try:
                    await self._poll_log()
                except StoreError as error:
                    log.warning("feed server: the log does not answer either: %s", error)
                await asyncio.sleep(POLL)
                with contextlib.suppress(RedisError, OSError):
                    await self.redis.ping()
                    log.info("feed server: Redis answers again")
                    self.redis_up, self.error = True, None
                    for tailer in self.tailers.values():  # back to Redis: gaps are filled from the log there
                        tailer.frontier, tailer.held = None, []

    async def _read_redis(self) -> None:
        announced_at = -ANNOUNCE_REFRESH
        while True:
            if time.monotonic() - announced_at >= ANNOUNCE_REFRESH:  # tables that started since the last look
                announced: Any = await self.redis.smembers(TABLES_KEY)
                self._known |= set(announced)
                announced_at = time.monotonic()
            if not self.tailers:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), BLOCK_MS / 1000)
                self._wake.clear()
                continue
            positions = {stream_key(table): f"{tailer.delivered}-0" for table, tailer in self.tailers.items()}
            answer: Any = await self.redis.xread(positions, count=PAGE, block=BLOCK_MS)  # type: ignore[arg-type]
            for key, entries in answer or []:
                table = key.removeprefix("studio:feed:")
                for _entry_id, fields in entries:
                    await self._take(table, int(fields["seq"]), int(fields["prev"]), fields["msg"])

    async def _take(self, table: str, seq: int, prev: int, text: str) -> None:
        tailer = self.tailers[table]
        if seq <= tailer.delivered:
            return
        if prev != tailer.delivered:  # something between what we have and this entry is not in Redis: the log has it
            messages, _ = await asyncio.to_thread(self.log_feed.backlog, table, tailer.delivered, seq - 1, 10**9)
            for message in messages:
                self.hub.deliver(table, int(message["seq"]), encode(message))
        self.hub.deliver(table, seq, text)
        tailer.delivered = seq

    async def _poll_log(self) -> None:
        for table, tailer in list(self.tailers.items()):
            if tailer.frontier is None:  # `delivered` was published, so a frontier may start there
                tailer.frontier = PublicationFrontier()
                tailer.frontier.published = tailer.scanned = tailer.delivered
            records = await asyncio.to_thread(read_after, self.store, table, tailer.scanned)
            for record in records:
                tailer.frontier.advance(record.seq, record.kind)
                tailer.scanned = record.seq
                message = self.log_feed.message(record)
                if message is not None:
                    tailer.held.append((record.seq, encode(message)))
            released = [item for item in tailer.held if item[0] <= tailer.frontier.published]
            tailer.held = tailer.held[len(released) :]
            for seq, text in released:
                self.hub.deliver(table, seq, text)
            tailer.delivered = max(tailer.delivered, tailer.frontier.published)

    async def close(self) -> None:
        await self.redis.aclose()
