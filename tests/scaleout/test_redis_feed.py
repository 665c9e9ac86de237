"""The results feed across processes, for real: a table process (`studio run` on PostgreSQL, publishing to Redis) and
two stateless feed servers (`studio feed`), each with WebSocket subscribers. Redis is stopped under load and started
again empty, and the table process is SIGKILLed mid-round and restarted: every subscriber still gets every message
exactly once, in order — the same messages as the table's own REST feed read from the log."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from studio.clock import SystemClock
from studio.users import UserStore
from tests.api_client import ApiClient
from tests.scaleout.support import STUDIO, TABLE_TOML, Process, free_port, step
from tests.services import RedisServer

SUBSCRIBERS_PER_FEED_SERVER = 10


class Subscribers:
    """WebSocket subscribers on their own event loop (a thread), each recording the seqs it receives."""

    def __init__(self, urls: list[str], key: str) -> None:
        self.received: list[list[int]] = [[] for _ in urls]
        self.errors: list[str] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.tasks = [asyncio.run_coroutine_threadsafe(self._listen(url, key, seqs), self.loop)
                      for url, seqs in zip(urls, self.received, strict=True)]  # fmt: skip

    async def _listen(self, url: str, key: str, seqs: list[int]) -> None:
        try:
            async with connect(url, additional_headers={"X-API-Key": key}, max_queue=None) as socket:
                async for text in socket:
                    seqs.append(int(json.loads(text)["seq"]))
        except Exception as error:  # reported by the test, which expects none
            self.errors.append(f"{url}: {error!r}")

    def stop(self) -> None:
        """Close every connection (on the subscribers' loop, so nothing is left for the garbage collector), then the
        loop."""
        asyncio.run_coroutine_threadsafe(self._close_all(), self.loop).result(timeout=20)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        self.loop.close()

    async def _close_all(self) -> None:
        listening = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in listening:
            task.cancel()
        await asyncio.gather(*listening, return_exceptions=True)


def feed_truth(url: str, key: str) -> list[int]:
    """Every seq of the table's feed, read from the log by the table process itself."""
    api = ApiClient(url)  # no session: the game server's key goes in a header
    seqs: list[int] = []
    after = 0
    while True:
        page: Any = api.call("GET", f"/api/feed/T1?after={after}", headers={"X-API-Key": key})
        seqs += [int(message["seq"]) for message in page["messages"]]
        if page["next_after"] == after:
            return seqs
        after = page["next_after"]


def deal(dealer: ApiClient, steps: int) -> None:
    for _ in range(steps):
        step(dealer)


@pytest.mark.slow
def test_every_subscriber_gets_every_message_once_through_a_redis_restart_and_a_table_crash(
    postgres_url: str, tmp_path: Path
) -> None:
    redis = RedisServer(tmp_path / "redis")
    redis.start()
    table = tmp_path / "t1.toml"
    table.write_text(TABLE_TOML)
    users = UserStore(postgres_url, SystemClock())
    key = users.add_api_key("gs1")
    users.close()
    studio = Process("studio", ["run", "--database", postgres_url, "--redis", redis.url, "--table", str(table),
                                "--demo-port", str(free_port())], tmp_path)  # fmt: skip
    feeds = [Process(f"feed{n}", ["feed", "--database", postgres_url, "--redis", redis.url], tmp_path) for n in (1, 2)]
    subscribers: Subscribers | None = None
    try:
        studio.start()
        for feed in feeds:
            feed.start()
        urls = [f"ws://127.0.0.1:{feed.port}/ws/feed/T1?after=0" for feed in feeds]
        subscribers = Subscribers(urls * SUBSCRIBERS_PER_FEED_SERVER, key)
        dealer = ApiClient(studio.url, "dealer", "dealer")
        deal(dealer, 40)

        redis.stop()  # under load: the tables go on, the feed servers serve from the log
        deal(dealer, 30)
        redis.start()  # empty: the table process refills it from the log, the feed servers fill gaps from the log
        deal(dealer, 30)

        while step(dealer) != "dealing":  # into a round, then a crash in the middle of it
            pass
        step(dealer)
        studio.kill()
        studio.start()
        dealer = ApiClient(studio.url, "dealer", "dealer")
        deal(dealer, 40)

        truth = feed_truth(studio.url, key)
        assert len(truth) > 50
        deadline = time.monotonic() + 30
        while any(len(seqs) < len(truth) for seqs in subscribers.received) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert subscribers.errors == []
        for seqs in subscribers.received:
            assert seqs == truth  # nothing lost, nothing twice, in order
        # The paths under test were taken: the feed servers served from the log while Redis was down, the table
        # process refilled Redis once it answered.
        assert all("serving from the log" in feed.log.read_text() for feed in feeds)
        assert "Redis unavailable" in studio.log.read_text()
        # The log the crash interrupted verifies: hash chain, replay of every event, every result confirmed.
        verify = subprocess.run([*STUDIO, "log", "verify", postgres_url], capture_output=True, text=True, check=False)
        assert verify.returncode == 0, verify.stdout + verify.stderr
    except BaseException:
        for process in (studio, *feeds):
            print(f"--- {process.name}\n{process.output()}")
        raise
    finally:
        if subscribers is not None:
            subscribers.stop()
        for process in (*feeds, studio):
            process.stop()
        redis.stop()
