"""A pit boss closes a table between rounds and opens it again; a dealer cannot."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from dealer_ui.app import create_app
from dealer_ui.runtime import StudioSettings


def test_close_and_open_a_table(tmp_path: Path) -> None:
    app = create_app(StudioSettings(database=str(tmp_path / "s.db"), demo=True))
    with TestClient(app) as client:
        client.post("/api/login", json={"name": "dealer", "password": "dealer"})
        assert client.post("/api/tables/T1/close", json={"reason": "break"}).status_code == 403
        client.post("/api/login", json={"name": "pitboss", "password": "pitboss"})
        assert client.post("/api/tables/T1/close", json={"reason": ""}).status_code == 422
        closed = client.post("/api/tables/T1/close", json={"reason": "end of the session"})
        assert closed.status_code == 200
        view = closed.json()["table"]
        assert view["phase"] == "closed" and view["next_action"]["text"] == "Table closed"
        client.post("/api/login", json={"name": "dealer", "password": "dealer"})
        refused = client.post("/api/tables/T1/shuffle")
        assert refused.status_code == 409 and refused.json()["detail"]["phase"] == "closed"
        client.post("/api/login", json={"name": "pitboss", "password": "pitboss"})
        assert client.post("/api/tables/T1/open").json()["table"]["phase"] == "awaiting_shuffle"
