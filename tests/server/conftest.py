"""Shared fixtures for the server tests: an app on a temporary SQLite file, a manual clock, signed-in people.

Tables read a memory card source (no pseudo-terminal, nothing arrives by itself): cards enter the table only when a
test keys them in, so every test drives the procedure step by step. Password hashing is made cheap here (the
library's defaults cost about 0.1 s a hash, by design); the hashing itself is the library's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx2 import Response

from dealer_ui.app import create_app
from dealer_ui.runtime import Studio, StudioSettings
from studio.clock import ManualClock
from studio.users import Principal, Role

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
BURN_CARDS = ("2D", "3D", "4D", "5D", "6D", "7D")
NATURAL = ("9H", "2S", "KD", "3C")  # Player 9 (natural), Banker 5: both stand, Player wins after 4 cards

T1 = """\
[table]
id = "T1"

[procedure]
burn_after_shuffle = 2
burn_after_error = 1
burn_after_dealer_change = 1
betting_seconds = 10
warning_seconds = 3
allow_early_close = true

[[sources]]
id = "T1-keyed"
driver = "memory"
"""

T2 = """\
[table]
id = "T2"

[procedure]
burn_after_shuffle = 2
betting_seconds = 10
warning_seconds = 3
allow_early_close = false

[[sources]]
id = "T2-keyed"
driver = "memory"
"""


@pytest.fixture(autouse=True)
def cheap_password_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "studio.users.PasswordHasher", lambda **_: PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


def studio_app(folder: Path, clock: ManualClock, *tables: str) -> FastAPI:
    """A demo-mode studio on `folder/s.db` with these tables (each a TOML text, written as t1.toml, t2.toml...)."""
    files = []
    for number, text in enumerate(tables, start=1):
        path = folder / f"t{number}.toml"
        path.write_text(text)
        files.append(path)
    return create_app(StudioSettings(database=str(folder / "s.db"), demo=True, table_files=tuple(files)), clock)


@pytest.fixture
def app(tmp_path: Path, clock: ManualClock) -> FastAPI:
    return studio_app(tmp_path, clock, T1, T2)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def studio(app: FastAPI) -> Studio:
    running: Studio = app.state.studio
    return running


def sign_in(client: TestClient, name: str, password: str | None = None) -> dict[str, str]:
    """Headers that carry the session token of `name` (demo accounts: the password is the name)."""
    response = client.post("/api/login", json={"name": name, "password": password or name})
    assert response.status_code == 200, response.text
    client.cookies.clear()  # each request says who it is by its own header, never by a leftover cookie
    return {"Authorization": f"Bearer {response.json()['token']}"}


@dataclass
class Desk:
    """One table seen from the test: the dealer's and the pit boss's actions over HTTP, and the table's log."""

    client: TestClient
    studio: Studio
    table: str
    dealer: dict[str, str]
    pit_boss: dict[str, str]
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def seq(self) -> int:
        return self.studio.tables[self.table].service.seq

    @property
    def published(self) -> int:
        return self.studio.tables[self.table].service.published_seq

    @property
    def phase(self) -> str:
        return self.studio.tables[self.table].service.state.phase.value

    def post(self, action: str, who: dict[str, str] | None = None, json: Any = None) -> Response:
        return self.client.post(f"/api/tables/{self.table}/{action}", headers=who or self.dealer, json=json)

    def ok(self, action: str, who: dict[str, str] | None = None, json: Any = None) -> list[str]:
        """Post an action that must succeed; the kinds of what it logged."""
        response = self.post(action, who, json)
        assert response.status_code == 200, response.text
        body = response.json()
        self.history.append(body)
        return [entry["kind"] for entry in body["logged"]]

    def card(self, code: str, who: dict[str, str] | None = None) -> list[str]:
        return self.ok("card", who, {"card": code})

    def deal(self, *codes: str) -> list[str]:
        kinds: list[str] = []
        for code in codes:
            kinds += self.card(code)
        return kinds

    def to_ready(self) -> None:
        """A new shoe: shuffle, cut card, the shuffle burn."""
        self.ok("shuffle")
        self.ok("cut", json={})
        burn = self.studio.tables[self.table].config.procedure.burn_after_shuffle
        self.deal(*BURN_CARDS[:burn])
        assert self.phase == "ready"

    def to_dealing(self) -> None:
        self.ok("open-betting")
        self.ok("close-betting")
        assert self.phase == "dealing"


def session_for(studio: Studio, name: str, role: Role) -> dict[str, str]:
    """Headers with a session opened directly in the store (signing in over HTTP is tested in test_session)."""
    return {"Authorization": f"Bearer {studio.users.open_session(Principal(name, role))}"}


@pytest.fixture
def desk(client: TestClient, studio: Studio) -> Desk:
    return Desk(
        client, studio, "T1", session_for(studio, "dealer", Role.DEALER), session_for(studio, "pitboss", Role.PIT_BOSS)
    )


@pytest.fixture
def game_server(studio: Studio) -> dict[str, str]:
    return {"X-API-Key": studio.users.add_api_key("operator-1")}


def add_person(studio: Studio, name: str, role: Role) -> None:
    studio.users.add_user(name, role, f"{name}-pw")
