"""A table's writes run on its own writer thread, never on the event loop (issue 13): while another process holds the
SQLite database's write lock, the command waits, and every console and feed reader keeps its answers meanwhile."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from fastapi.testclient import TestClient
from httpx2 import Response

from tests.server.conftest import Desk


def test_a_locked_database_holds_up_the_command_not_the_consoles(
    desk: Desk, client: TestClient, game_server: dict[str, str], tmp_path: Path
) -> None:
    before = desk.seq
    lock = sqlite3.connect(tmp_path / "s.db", timeout=1)
    lock.execute("BEGIN IMMEDIATE")  # another writer holds the database (as a backup tool or a stuck process would)
    answers: list[Response] = []
    shuffle = threading.Thread(target=lambda: answers.append(desk.post("shuffle")))
    shuffle.start()
    try:
        time.sleep(0.3)  # let the command reach the database and wait there for the lock
        assert shuffle.is_alive() and desk.seq == before  # the command waits for the database...
        for _ in range(5):  # ... and the consoles and the results feed answer all the while
            started = time.monotonic()
            assert client.get("/api/tables/T1", headers=desk.dealer).status_code == 200
            assert client.get("/api/feed/T1", headers=game_server).status_code == 200
            assert time.monotonic() - started < 1.0  # not held up by the lock (it is held for seconds more)
        assert shuffle.is_alive()  # all of this happened while the write still waited
    finally:
        lock.rollback()
        lock.close()
        shuffle.join(timeout=15)
    assert [response.status_code for response in answers] == [200]  # once the lock is gone, the command is logged
    assert desk.seq == before + 1
