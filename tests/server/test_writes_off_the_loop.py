"""A table's writes run on its own writer thread, never on the event loop (issue 13): while another process holds the
SQLite database's write lock, the table's command waits, and every console and feed subscriber keeps its answers."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from httpx2 import Response

from dealer_ui.runtime import Studio
from tests.server.conftest import NATURAL, Desk

ANSWER_WITHIN = 1.0  # seconds; the lock is held for longer, and the answers must all come while it is


def test_a_locked_database_holds_up_the_command_not_the_consoles(
    desk: Desk, client: TestClient, game_server: dict[str, str], tmp_path: Path
) -> None:
    desk.to_ready()
    desk.to_dealing()  # the feed has the round's opening and "no more bets" to give a subscriber
    before = desk.seq
    lock = sqlite3.connect(tmp_path / "s.db", timeout=1)
    lock.execute("BEGIN IMMEDIATE")  # another writer holds the database (as a backup tool or a stuck process would)
    answers: list[Response] = []
    card = threading.Thread(target=lambda: answers.append(desk.post("card", json={"card": "2H"})))
    card.start()
    try:
        time.sleep(0.3)  # let the command reach the database and wait there for the lock
        assert card.is_alive() and desk.seq == before  # the command waits for the database...

        def answered(ask: Callable[[], Any], after: float = 0.0) -> Any:  # ... while the consoles and feed answer
            started = time.monotonic()
            answer = ask()
            assert time.monotonic() - started < after + ANSWER_WITHIN
            return answer

        with client.websocket_connect("/ws/tables/T1", headers=desk.dealer) as console:
            assert answered(console.receive_json)["phase"] == "dealing"  # the view at once
            assert answered(console.receive_json, after=1.0)["phase"] == "dealing"  # the timer's tick, a second on
        with client.websocket_connect("/ws/feed/T1?after=0", headers=game_server) as feed:
            assert answered(feed.receive_json)["type"] == "shoe_started"  # its backlog, read from the log
        for _ in range(3):
            assert answered(lambda: client.get("/api/tables/T1", headers=desk.dealer)).status_code == 200
            assert answered(lambda: client.get("/api/feed/T1", headers=game_server)).status_code == 200
        assert card.is_alive()  # all of this happened while the write still waited
    finally:
        lock.rollback()
        lock.close()
        card.join(timeout=15)
    assert [response.status_code for response in answers] == [200]  # once the lock is gone, the card is logged
    assert desk.seq == before + 1


def test_what_a_table_publishes_reaches_the_hub_on_the_event_loop(desk: Desk, studio: Studio, monkeypatch: Any) -> None:
    """The writer thread logs; the hub's subscriber queues belong to the event loop, so the records are handed over
    to the loop (a queue filled from another thread would not wake its reader)."""
    loops: list[Any] = []
    publish = studio.hub.publish

    def on_which_loop(records: Any) -> None:
        loops.append(asyncio.get_running_loop())
        publish(records)

    monkeypatch.setattr(studio.hub, "publish", on_which_loop)
    desk.to_ready()
    assert loops and all(loop is studio.publisher.loop for loop in loops)
    assert studio.publisher.loop is not None and threading.current_thread() is threading.main_thread()


def test_a_result_reaches_the_feed_once_its_bets_are_settled(desk: Desk, studio: Studio, monkeypatch: Any) -> None:
    """A game server told a result can read its settlement at once: the records a command logs are handed to the hub
    only after the settlement the command called for is written."""
    settled_when_published: list[bool] = []
    publish = studio.hub.publish

    def check(records: Any) -> None:
        settled_when_published.extend(studio.wallets.is_settled(r.data["game_id"]) for r in records
                                      if r.kind == "RoundCompleted")  # fmt: skip
        publish(records)

    monkeypatch.setattr(studio.hub, "publish", check)
    desk.to_ready()
    desk.to_dealing()
    desk.deal(*NATURAL)
    assert settled_when_published == [True]
