"""Signing in and out: sessions by cookie or bearer token, API keys for game servers, and what a wrong one gets."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from dealer_ui.auth import SESSION_COOKIE
from dealer_ui.runtime import Studio
from studio.access import DEFAULT_SESSIONS
from studio.clock import ManualClock
from studio.domain.roles import Role
from tests.server.conftest import add_person, sign_in


def test_a_wrong_name_or_password_is_401(client: TestClient) -> None:
    for name, password in [("dealer", "wrong"), ("nobody", "dealer"), ("dealer", "DEALER"), ("Dealer", "dealer")]:
        response = client.post("/api/login", json={"name": name, "password": password})
        assert response.status_code == 401, (name, password)
        assert response.json() == {"detail": "wrong name or password"}
        assert SESSION_COOKIE not in response.cookies


def test_sign_in_returns_a_token_and_sets_the_session_cookie(client: TestClient) -> None:
    response = client.post("/api/login", json={"name": "pitboss", "password": "pitboss"})
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "pitboss" and body["role"] == "pit_boss" and len(body["token"]) >= 40
    assert response.cookies[SESSION_COOKIE] == body["token"]
    # The cookie alone identifies the person (the console page relies on it).
    assert client.get("/api/me").json() == {"name": "pitboss", "role": "pit_boss", "demo": True}


@pytest.mark.parametrize(
    ("name", "role"),
    [("dealer", "dealer"), ("pitboss", "pit_boss"), ("surveillance", "surveillance"), ("admin", "admin")],
)
def test_me_by_bearer_token_for_every_demo_account(client: TestClient, name: str, role: str) -> None:
    headers = sign_in(client, name)
    assert client.get("/api/me", headers=headers).json() == {"name": name, "role": role, "demo": True}


def test_me_with_an_api_key_names_the_game_server(client: TestClient, game_server: dict[str, str]) -> None:
    assert client.get("/api/me", headers=game_server).json() == {
        "name": "operator-1",
        "role": "game_server",
        "demo": True,
    }


def test_me_without_valid_credentials_is_401(client: TestClient) -> None:
    for headers in [
        {},
        {"Authorization": "Bearer not-a-token"},
        {"X-API-Key": "sk_not-a-key"},
        {"Authorization": "Basic ZGVhbGVyOmRlYWxlcg=="},
    ]:
        response = client.get("/api/me", headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"] == "Bearer"


def test_a_created_account_signs_in_with_its_own_password(client: TestClient, studio: Studio) -> None:
    add_person(studio, "bob", Role.PIT_BOSS)
    assert client.post("/api/login", json={"name": "bob", "password": "bob"}).status_code == 401
    headers = sign_in(client, "bob", "bob-pw")
    assert client.get("/api/me", headers=headers).json()["role"] == "pit_boss"


def test_sign_out_ends_a_cookie_session(client: TestClient) -> None:
    client.post("/api/login", json={"name": "dealer", "password": "dealer"})
    assert client.get("/api/me").status_code == 200
    assert client.post("/api/logout").json() == {"status": "signed out"}
    assert client.get("/api/me").status_code == 401


def test_sign_out_ends_a_bearer_session(client: TestClient) -> None:
    headers = sign_in(client, "dealer")
    assert client.post("/api/logout", headers=headers).status_code == 200
    assert client.get("/api/me", headers=headers).status_code == 401


def test_a_session_expires_at_its_roles_length_however_busy(client: TestClient, clock: ManualClock) -> None:
    headers = sign_in(client, "dealer")
    length = DEFAULT_SESSIONS[Role.DEALER].length  # 9 hours
    for _ in range(int(length.total_seconds()) // 600 - 1):  # busy: a call every 10 minutes, never idle
        clock.advance(600)
        assert client.get("/api/me", headers=headers).status_code == 200
    clock.advance(600 - 1)
    assert client.get("/api/me", headers=headers).status_code == 200
    clock.advance(1)
    response = client.get("/api/me", headers=headers)
    assert response.status_code == 401
    assert response.json()["detail"] == "your session has ended (a dealer session lasts 9 h): sign in again"
    assert client.get("/api/me", headers=headers).json()["detail"] == "sign in first"  # it is gone


def test_malformed_sign_in_is_422(client: TestClient) -> None:
    for body in [
        {},
        {"name": "dealer"},
        {"password": "dealer"},
        {"name": "", "password": "dealer"},
        {"name": "dealer", "password": ""},
        {"name": "d" * 65, "password": "dealer"},
        {"name": "dealer", "password": "p" * 257},
        {"name": ["dealer"], "password": "dealer"},
    ]:
        assert client.post("/api/login", json=body).status_code == 422, body


def test_a_body_that_is_not_json_is_422(client: TestClient) -> None:
    response = client.post("/api/login", content=b"name=dealer", headers={"Content-Type": "application/json"})
    assert response.status_code == 422
