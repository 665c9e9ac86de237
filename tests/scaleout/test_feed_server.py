"""A feed server's reader (dealer_ui/redis_feed.py) against a table's own publication: through a real Redis, and
from the log alone while Redis cannot be reached — where a suspension's records must still wait for the pit boss."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from dealer_ui.feed_app import create_feed_app
from dealer_ui.feed_log import LogFeed
from dealer_ui.hub import FeedHub
from dealer_ui.redis_feed import RedisFeedServer, RedisForwarder
from dealer_ui.runtime import Studio, StudioSettings
from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain.cards import Card
from studio.domain.errors import ConfigError
from studio.domain.procedure_config import ProcedureConfig
from studio.store_sql import SqlEventStore
from studio.table_service import TableService
from studio.users import UserStore
from tests.services import RedisServer
from tests.waiting import until

DEALER, BOSS = "dealer:ann", "pit_boss:bob"
UNREACHABLE = "redis://127.0.0.1:1/0"


class Table:
    """A table publishing to its own hub (and to Redis through a forwarder, when given one)."""

    def __init__(self, folder: Path) -> None:
        self.url = f"sqlite:///{folder / 'studio.db'}"
        self.store = SqlEventStore(self.url)
        self.clock = ManualClock(datetime(2026, 11, 29, 12, tzinfo=UTC))
        self.hub = FeedHub(LogFeed(self.store).with_roads)
        config = ProcedureConfig(burn_after_shuffle=0, burn_after_error=0, allow_early_close=True)
        self.service = TableService("T1", self.store, self.clock, config, self.hub)

    def run(self, *commands: c.Command) -> None:
        for command in commands:
            self.service.handle(command)

    def deal(self, *codes: str) -> None:
        self.run(*(c.DrawCard("device:shoe", c.CardRead(Card.parse(code), "shoe")) for code in codes))

    def feed_seqs(self) -> list[int]:
        messages, _ = LogFeed(self.store).backlog("T1", 0, self.service.published_seq, 10_000)
        return [int(message["seq"]) for message in messages]


async def received(queue: asyncio.Queue[tuple[int, str] | None], last: int, seconds: float = 10.0) -> list[int]:
    """The seqs a subscription receives until `last` arrives (or time runs out)."""
    seqs: list[int] = []
    async with asyncio.timeout(seconds):
        while not seqs or seqs[-1] < last:
            item = await queue.get()
            assert item is not None
            seqs.append(item[0])
            assert json.loads(item[1])["seq"] == item[0]
    return seqs


def test_without_redis_the_feed_server_reads_the_log_and_holds_back_a_suspension(tmp_path: Path) -> None:
    async def scenario() -> None:
        table = Table(tmp_path)
        table.run(c.ConfirmShuffle(DEALER), c.PlaceCutCard(DEALER), c.OpenBetting(DEALER))
        server = RedisFeedServer(SqlEventStore(table.url), UNREACHABLE)
        reader = asyncio.create_task(server.run())
        await server.follow("T1")
        subscription = server.hub.subscribe("T1")
        before = table.feed_seqs()[-1]  # the round's opening: published before this subscriber came
        table.run(c.CloseBetting(DEALER))
        table.deal("2H")
        first = await received(subscription.queue, table.feed_seqs()[-1])
        table.run(c.DeclareError(DEALER, "card_exposed", "a card flipped"))  # the suspension goes out at once
        suspended = await received(subscription.queue, table.store.last_seq("T1"))
        table.run(c.CorrectCard(BOSS, 1, Card.parse("3H"), "the card was the 3 of hearts"))  # a feed message...
        # ... read from the log and held back with the suspension: nothing more reaches the subscriber.
        logged = table.store.last_seq("T1")
        await until(lambda: server.tailers["T1"].scanned >= logged, "the feed server to read the correction")
        assert subscription.queue.empty() and not server.redis_up
        table.run(c.ContinuePlay(BOSS, "resolved"))
        table.deal("4H", "5H", "6H")
        expected = [seq for seq in table.feed_seqs() if seq > before]
        rest = await received(subscription.queue, expected[-1])
        assert first + suspended + rest == expected  # everything after the subscription began, once, in order
        reader.cancel()
        await server.close()

    asyncio.run(scenario())


def test_through_redis_a_feed_server_gets_every_message_once_even_when_redis_starts_empty(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    async def scenario() -> None:
        table = Table(tmp_path)
        forwarder = RedisForwarder(redis_server.url, LogFeed(table.store), lambda _: table.service.published_seq,
                                   ["T1"])  # fmt: skip
        table.hub.forward = forwarder.forward
        pushing = asyncio.create_task(forwarder.run())
        server = RedisFeedServer(SqlEventStore(table.url), redis_server.url)
        reader = asyncio.create_task(server.run())
        await server.follow("T1")
        subscription = server.hub.subscribe("T1")
        table.run(c.ConfirmShuffle(DEALER), c.PlaceCutCard(DEALER), c.OpenBetting(DEALER), c.CloseBetting(DEALER))
        table.deal("2H", "3H", "4H", "5H")
        first = await received(subscription.queue, table.feed_seqs()[-1])
        assert first == table.feed_seqs()  # through Redis
        await forwarder.redis.delete("studio:feed:T1")  # Redis loses the stream (a restart with nothing persisted)
        table.run(c.OpenBetting(DEALER), c.CloseBetting(DEALER))
        table.deal("6H", "7H", "8H", "9H")
        expected = table.feed_seqs()
        assert first + await received(subscription.queue, expected[-1]) == expected
        assert server.redis_up and forwarder.up
        reader.cancel()
        pushing.cancel()
        await server.close()
        await forwarder.close()

    asyncio.run(scenario())


def test_the_feed_server_app_reports_health_and_metrics_and_refuses_unknown_tables(tmp_path: Path) -> None:
    table = Table(tmp_path)
    table.run(c.ConfirmShuffle(DEALER))
    key = UserStore(table.url, table.clock).add_api_key("gs1")
    with TestClient(create_feed_app(table.url, UNREACHABLE)) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        assert client.get("/readyz").status_code == 200
        page = client.get("/api/feed/T1", headers={"X-API-Key": key})
        assert page.status_code == 200 and page.json()["table"] == "T1"
        assert client.get("/api/feed/T9", headers={"X-API-Key": key}).status_code == 404
        assert client.get("/api/feed/T1").status_code == 401
        families = {family.name: family for family in text_string_to_metric_families(client.get("/metrics").text)}
        assert "studio_feed_redis_up" in families and "studio_feed_subscribers" in families


def test_a_redis_url_that_is_not_one_is_a_configuration_error_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Redis URL 'http://cache:6379'"):
        Studio(StudioSettings(database=str(tmp_path / "s.db"), redis_url="http://cache:6379"))
