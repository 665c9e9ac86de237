"""Bad input (issue 14, point 6): a body over 64 KB gets 413 before it is parsed and changes nothing; a wrong API key
is told so (401 "invalid API key"), not asked to sign in; game servers' keys show in `studio users list`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dealer_ui.body_limit import MAX_BODY_BYTES
from studio_cli.main import main
from tests.server.conftest import Desk


def test_a_body_over_the_limit_is_refused_before_it_is_parsed(desk: Desk, client: TestClient) -> None:
    before = desk.seq
    huge = b'{"card": "QH", "padding": "' + b"x" * MAX_BODY_BYTES + b'"}'
    headers = {**desk.dealer, "Content-Type": "application/json"}
    refused = client.post("/api/tables/T1/shuffle", content=huge, headers=headers)
    assert refused.status_code == 413 and "over 65536 bytes" in refused.json()["detail"]
    assert desk.seq == before  # nothing was done

    def chunks() -> Iterator[bytes]:  # no Content-Length: the body is counted as it streams in
        yield b'{"padding": "'
        for _ in range(MAX_BODY_BYTES // 1024 + 2):
            yield b"x" * 1024
        yield b'"}'

    streamed = client.post("/api/tables/T1/shuffle", content=chunks(), headers=headers)
    assert streamed.status_code == 413 and desk.seq == before
    assert desk.post("shuffle").status_code == 200  # an ordinary request still goes through


def test_a_wrong_api_key_is_told_so(client: TestClient, game_server: dict[str, str]) -> None:
    wrong = client.get("/api/feed/T1", headers={"X-API-Key": "sk_not-a-key"})
    assert wrong.status_code == 401 and wrong.json()["detail"] == "invalid API key"
    assert client.get("/api/feed/T1").json()["detail"] == "sign in first"  # no key, no session
    assert client.get("/api/feed/T1", headers=game_server).status_code == 200


def test_game_server_keys_show_in_the_users_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = str(tmp_path / "users.db")
    assert main(["users", "--database", database, "add-key", "operator-1"]) == 0
    key = capsys.readouterr().out
    assert main(["users", "--database", database, "list"]) == 0
    listed = capsys.readouterr().out
    assert "operator-1" in listed and "game_server (API key made" in listed
    assert key.strip().split()[-1] not in listed  # the key itself is never shown again
