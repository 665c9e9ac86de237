"""Staff access (issue 18): lockout and throttling on an injected clock, the access log (every event; verified; an edit
detected), sessions by role (length, idle, single session), security headers, and a database outage that is not a
sign-out."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine
from starlette.websockets import WebSocketDisconnect

from dealer_ui.app import create_app
from dealer_ui.auth import SESSION_COOKIE
from dealer_ui.runtime import Studio, StudioSettings
from dealer_ui.security_headers import docs_policy
from studio import access as a
from studio.access import ACCESS_STREAM, AccessPolicy, RoleSessions, load_access_policy, policy_from_mapping
from studio.clock import ManualClock
from studio.domain.chain import verify_chain
from studio.domain.errors import ConfigError
from studio.domain.roles import Role
from studio_cli.main import main
from tests.server.conftest import Desk, sign_in

STATIC = Path(__file__).parents[2] / "dealer_ui" / "static"


def login(client: TestClient, name: str, password: str) -> tuple[int, str]:
    response = client.post("/api/login", json={"name": name, "password": password})
    client.cookies.clear()
    return response.status_code, response.json()["detail"] if response.status_code != 200 else "signed in"


def access_kinds(studio: Studio) -> list[str]:
    return [record.kind for record in studio.users.access_log.read()]


# Lockout.


def test_five_failures_lock_a_name_whether_or_not_an_account_has_it(client: TestClient, clock: ManualClock) -> None:
    answers: dict[str, list[tuple[int, str]]] = {}
    for name in ("pitboss", "nobody"):  # an account, and a name no account has
        answers[name] = [login(client, name, f"guess-{n}") for n in range(5)]
        answers[name].append(login(client, name, "pitboss"))  # the right password (for the account) during the lock
    assert answers["pitboss"] == answers["nobody"]  # nothing tells the two apart
    assert answers["pitboss"][:4] == [(401, "wrong name or password")] * 4
    status, detail = answers["pitboss"][4]
    assert status == 429
    assert detail.startswith("too many failed attempts: try again after 12:15:00 UTC (2024-05-01T12:15:00+00:00)")
    assert answers["pitboss"][5] == (429, detail)  # not even the right password gets in
    clock.advance(15 * 60 - 1)
    assert login(client, "pitboss", "pitboss")[0] == 429
    clock.advance(1)
    assert login(client, "pitboss", "pitboss") == (200, "signed in")


def test_the_lockout_answer_says_when_and_carries_retry_after(client: TestClient, clock: ManualClock) -> None:
    for _ in range(4):
        client.post("/api/login", json={"name": "dealer", "password": "wrong"})
    clock.advance(60)
    response = client.post("/api/login", json={"name": "dealer", "password": "wrong"})
    assert response.status_code == 429 and response.headers["retry-after"] == str(15 * 60)
    clock.advance(5 * 60)
    response = client.post("/api/login", json={"name": "dealer", "password": "dealer"})
    assert response.status_code == 429 and response.headers["retry-after"] == str(10 * 60)
    assert SESSION_COOKIE not in response.cookies


def test_failures_older_than_the_window_do_not_count(client: TestClient, clock: ManualClock) -> None:
    for _ in range(4):
        assert login(client, "dealer", "wrong")[0] == 401
    clock.advance(15 * 60 + 1)
    for _ in range(4):
        assert login(client, "dealer", "wrong")[0] == 401
    assert login(client, "dealer", "dealer")[0] == 200


def test_a_good_sign_in_forgets_the_names_failures(client: TestClient) -> None:
    for _ in range(4):
        assert login(client, "dealer", "wrong")[0] == 401
    assert login(client, "dealer", "dealer")[0] == 200
    for _ in range(4):
        assert login(client, "dealer", "wrong")[0] == 401
    assert login(client, "dealer", "dealer")[0] == 200


def test_one_address_guessing_many_names_is_throttled(client: TestClient) -> None:
    for n in range(19):
        assert login(client, f"name-{n}", "guess")[0] == 401
    status, detail = login(client, "name-19", "guess")
    assert status == 429 and "try again after" in detail
    assert login(client, "dealer", "dealer")[0] == 429  # from this address, nobody signs in meanwhile


def test_an_admin_unlocks_an_account_through_the_api(client: TestClient, studio: Studio) -> None:
    admin = sign_in(client, "admin")
    for _ in range(5):
        login(client, "pitboss", "wrong")
    assert login(client, "pitboss", "pitboss")[0] == 429
    surveillance = sign_in(client, "surveillance")
    assert client.post("/api/accounts/pitboss/unlock", headers=surveillance).status_code == 403
    response = client.post("/api/accounts/pitboss/unlock", headers=admin)
    assert response.status_code == 200 and response.json() == {"status": "unlocked", "name": "pitboss"}
    assert login(client, "pitboss", "pitboss")[0] == 200
    unlocked = [r for r in studio.users.access_log.read() if r.kind == a.ACCOUNT_UNLOCKED]
    assert unlocked[-1].actor == "admin:admin" and unlocked[-1].data["name"] == "pitboss"
    # Unlocking a name no account has answers the same.
    assert client.post("/api/accounts/nobody/unlock", headers=admin).json() == {"status": "unlocked", "name": "nobody"}


def test_an_admin_unlocks_an_address(client: TestClient) -> None:
    for n in range(20):
        login(client, f"name-{n}", "guess")
    assert login(client, "dealer", "dealer")[0] == 429
    studio_app: FastAPI = client.app  # type: ignore[assignment]
    users = studio_app.state.users
    users.unlock(address="testclient", by="admin:admin")
    assert login(client, "dealer", "dealer")[0] == 200


def test_studio_users_unlock_on_the_command_line(client: TestClient, app: FastAPI, capsys: Any) -> None:
    for _ in range(5):
        login(client, "pitboss", "wrong")
    database = app.state.studio.settings.database
    assert main(["users", "unlock", "pitboss", "--database", database]) == 0
    assert capsys.readouterr().out.strip() == "pitboss: unlocked"
    assert login(client, "pitboss", "pitboss")[0] == 200
    assert main(["users", "unlock", "nobody", "--database", database]) == 0
    assert "was not locked" in capsys.readouterr().out
    last = app.state.studio.users.access_log.read()[-1]
    assert last.kind == a.ACCOUNT_UNLOCKED and last.actor.startswith("system:cli")


def test_wrong_api_keys_are_throttled_per_address(client: TestClient, clock: ManualClock,
                                                  game_server: dict[str, str]) -> None:  # fmt: skip
    for n in range(19):
        response = client.get("/api/me", headers={"X-API-Key": f"sk_wrong-{n}"})
        assert response.status_code == 401 and response.json()["detail"] == "invalid API key"
    response = client.get("/api/me", headers={"X-API-Key": "sk_wrong-19"})
    assert response.status_code == 429 and "try again after" in response.json()["detail"]
    assert client.get("/api/me", headers=game_server).status_code == 429  # this address waits, whatever its key
    clock.advance(15 * 60)
    assert client.get("/api/me", headers=game_server).status_code == 200


# The access log.


def test_every_access_event_is_logged_with_who_where_when_and_what(
    client: TestClient, studio: Studio, desk: Desk, clock: ManualClock, game_server: dict[str, str]
) -> None:
    admin = sign_in(client, "admin")
    surveillance = sign_in(client, "surveillance")
    login(client, "dealer", "wrong")  # SignInFailed
    for _ in range(5):
        login(client, "ghost", "wrong")  # ... and the fifth: AccountLocked
    login(client, "ghost", "wrong")  # SignInRefused
    client.post("/api/accounts/ghost/unlock", headers=admin)  # AccountUnlocked
    client.get("/api/me", headers={"X-API-Key": "sk_wrong"})  # ApiKeyRefused
    desk.to_ready()
    assert client.get("/api/surveillance/tables/T1/shoes/1/export", headers=surveillance).status_code == 200
    client.post("/api/logout", headers=surveillance)  # SignedOut
    short = sign_in(client, "pitboss")
    clock.advance(16 * 60)
    assert client.get("/api/me", headers=short).status_code == 401  # SessionExpired (idle)
    sign_in(client, "admin")  # SessionReplaced: admin has one session at a time
    studio.users.add_user("zoe", Role.PIT_BOSS, "a-long-password", by="admin:admin")  # AccountCreated
    studio.users.set_display_name("zoe", "Zoé", by="admin:admin")  # AccountChanged
    studio.users.revoke_api_keys("operator-1", by="admin:admin")  # ApiKeyRevoked
    auditor = sign_in(client, "surveillance")
    assert client.get("/api/access-log/export", headers=auditor).status_code == 200  # AccessLogExported
    page = client.get("/api/access-log", params={"limit": 1000}, headers=auditor).json()
    kinds = {record["kind"] for record in page["records"]}
    assert kinds >= {a.SIGNED_IN, a.SIGN_IN_FAILED, a.ACCOUNT_LOCKED, a.SIGN_IN_REFUSED, a.ACCOUNT_UNLOCKED,
                     a.API_KEY_REFUSED, a.API_KEY_CREATED, a.RECORDS_EXPORTED, a.SIGNED_OUT, a.SESSION_EXPIRED,
                     a.SESSION_REPLACED, a.ACCOUNT_CREATED, a.ACCOUNT_CHANGED, a.API_KEY_REVOKED,
                     a.ACCESS_LOG_EXPORTED}  # fmt: skip
    assert page["head"] == len(page["records"])
    by_kind: dict[str, dict[str, Any]] = {}
    for record in page["records"]:
        by_kind.setdefault(record["kind"], record)  # the first of each kind
    assert by_kind[a.SIGN_IN_FAILED] | {"seq": 0, "hash": ""} == {
        "seq": 0, "at": "2024-05-01T12:00:00+00:00", "actor": "system:access", "kind": "SignInFailed",
        "address": "testclient", "name": "dealer", "hash": ""}  # fmt: skip
    assert by_kind[a.ACCOUNT_LOCKED]["name"] == "ghost"
    assert by_kind[a.RECORDS_EXPORTED] | {"seq": 0, "hash": "", "at": ""} == {
        "seq": 0, "at": "", "actor": "surveillance:surveillance", "kind": "RecordsExported", "address": "testclient",
        "what": "shoe", "id": "1", "table": "T1", "format": "json", "records": by_kind[a.RECORDS_EXPORTED]["records"],
        "hash": ""}  # fmt: skip
    assert by_kind[a.SESSION_EXPIRED]["actor"] == "pit_boss:pitboss"
    assert by_kind[a.SESSION_EXPIRED]["reason"] == "idle for 15 min"
    assert by_kind[a.SIGNED_OUT]["actor"] == "surveillance:surveillance"
    created = [(r["actor"], r["name"], r["role"]) for r in page["records"] if r["kind"] == a.ACCOUNT_CREATED]
    assert created == [("system:demo", "dealer", "dealer"), ("system:demo", "pitboss", "pit_boss"),
                       ("system:demo", "surveillance", "surveillance"), ("system:demo", "admin", "admin"),
                       ("admin:admin", "zoe", "pit_boss")]  # fmt: skip
    assert all(record["address"] is not None and record["at"] for record in page["records"])


def test_a_round_export_is_logged(client: TestClient, studio: Studio, desk: Desk) -> None:
    from tests.server.conftest import NATURAL  # noqa: PLC0415

    desk.to_ready()
    desk.to_dealing()
    desk.deal(*NATURAL)
    game_id = studio.tables["T1"].recent[-1]["game_id"]
    pit_boss = sign_in(client, "pitboss")
    assert client.get(f"/api/surveillance/rounds/{game_id}/export?format=csv", headers=pit_boss).status_code == 200
    last = studio.users.access_log.read()[-1]
    assert last.kind == a.RECORDS_EXPORTED and last.actor == "pit_boss:pitboss"
    assert (last.data["what"], last.data["id"], last.data["format"]) == ("round", game_id, "csv")


def test_only_admin_and_surveillance_read_the_access_log_and_nobody_writes_it(
    client: TestClient, game_server: dict[str, str]
) -> None:
    for name, status in (("admin", 200), ("surveillance", 200), ("pitboss", 403), ("dealer", 403)):
        headers = sign_in(client, name)
        for path in ("/api/access-log", "/api/access-log/verify", "/api/access-log/export?format=csv"):
            assert client.get(path, headers=headers).status_code == status, (name, path)
        for method in ("POST", "PUT", "PATCH", "DELETE"):
            assert client.request(method, "/api/access-log", headers=headers).status_code == 405
    assert client.get("/api/access-log", headers=game_server).status_code == 403
    assert client.get("/api/access-log").status_code == 401


def test_the_access_log_pages_by_seq(client: TestClient) -> None:
    auditor = sign_in(client, "surveillance")
    first = client.get("/api/access-log", params={"limit": 2}, headers=auditor).json()
    assert [r["seq"] for r in first["records"]] == [1, 2]
    more = client.get("/api/access-log", params={"after": 2, "limit": 2}, headers=auditor).json()
    assert [r["seq"] for r in more["records"]] == [3, 4]


def test_the_access_log_verifies_and_an_edit_is_detected(client: TestClient, app: FastAPI, desk: Desk,
                                                         capsys: Any) -> None:  # fmt: skip
    login(client, "dealer", "wrong")
    auditor = sign_in(client, "surveillance")
    desk.to_ready()
    database = app.state.studio.settings.database
    assert client.get("/api/access-log/verify", headers=auditor).json()["ok"] is True
    assert main(["log", "verify", database]) == 0
    out = capsys.readouterr().out
    assert f"OK        access log {ACCESS_STREAM}:" in out and "OK        table T1:" in out
    # Someone with the database file rewrites a failed sign-in as somebody else's.
    with sqlite3.connect(database) as raw:
        raw.execute("UPDATE event_log SET data = replace(data, 'dealer', 'pitboss') "
                    "WHERE stream = ? AND kind = 'SignInFailed'", (ACCESS_STREAM,))  # fmt: skip
    assert main(["log", "verify", database]) == 3
    out = capsys.readouterr().out
    assert f"TAMPERED  access log {ACCESS_STREAM}: first bad record seq" in out and "OK        table T1:" in out
    verdict = client.get("/api/access-log/verify", headers=auditor).json()
    assert verdict["ok"] is False and verdict["first_bad_seq"] is not None


def test_the_access_stream_is_not_a_table_for_log_show_and_export(client: TestClient, app: FastAPI, desk: Desk,
                                                                  capsys: Any) -> None:  # fmt: skip
    desk.to_ready()
    database = app.state.studio.settings.database
    sign_in(client, "dealer")  # the access log has records too
    capsys.readouterr()
    assert main(["log", "show", database, "--table", "T2"]) == 1  # T2 has logged nothing yet
    # T1 alone needs no --table: the access log is no table.
    assert main(["log", "export", database, "--shoe", "1"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported  # the shoe's records
    assert a.SIGNED_IN not in {row["kind"] for row in exported}
    # An export from the command line is on the access log too, naming the system user who ran it.
    (logged,) = [r for r in app.state.studio.users.access_log.read() if r.kind == a.RECORDS_EXPORTED]
    assert logged.actor.startswith("system:cli-")  # the system user who ran it
    assert (logged.data["what"], logged.data["id"], logged.data["table"]) == ("shoe", "1", "T1")
    assert logged.data["records"] == len(exported)


# Sessions by role.


def test_a_session_ends_after_its_roles_idle_time(client: TestClient, clock: ManualClock, studio: Studio) -> None:
    pit_boss, dealer = sign_in(client, "pitboss"), sign_in(client, "dealer")
    for _ in range(6):  # busy for an hour and a half: a call every 14 minutes keeps both
        clock.advance(14 * 60)
        assert client.get("/api/me", headers=pit_boss).status_code == 200
        assert client.get("/api/me", headers=dealer).status_code == 200
    clock.advance(15 * 60)  # the pit boss's idle limit; the dealer's is 30 minutes
    response = client.get("/api/me", headers=pit_boss)
    assert response.status_code == 401
    assert response.json()["detail"] == "your session has ended (idle for 15 min): sign in again"
    assert client.get("/api/me", headers=dealer).status_code == 200
    clock.advance(30 * 60)
    assert client.get("/api/me", headers=dealer).status_code == 401
    expired = [r for r in studio.users.access_log.read() if r.kind == a.SESSION_EXPIRED]
    assert [(r.actor, r.data["reason"]) for r in expired] == [("pit_boss:pitboss", "idle for 15 min"),
                                                              ("dealer:dealer", "idle for 30 min")]  # fmt: skip


def test_an_open_console_stream_ends_with_its_session_and_does_not_keep_it_alive(
    client: TestClient, clock: ManualClock
) -> None:
    """A console left open streams the table, but that is no activity: once the dealer's session has been idle for
    its limit, the stream closes with 4401 (and the page goes to sign in)."""
    dealer = sign_in(client, "dealer")
    with client.websocket_connect("/ws/tables/T1", headers=dealer) as console:
        assert console.receive_json()["table"] == "T1"
        for _ in range(2):  # ten minutes at a time: the stream re-checks, without counting as use
            clock.advance(10 * 60)
            assert console.receive_json()["table"] == "T1"
        clock.advance(11 * 60)  # 31 minutes since the sign-in, the session's only use
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(5):
                console.receive_json()
    assert closed.value.code == 4401 and "session has ended" in closed.value.reason
    assert client.get("/api/me", headers=dealer).status_code == 401


def test_the_idle_time_counts_from_the_last_request_to_within_a_minute(client: TestClient, clock: ManualClock) -> None:
    headers = sign_in(client, "pitboss")
    clock.advance(30)  # a request within the minute is not written...
    assert client.get("/api/me", headers=headers).status_code == 200
    clock.advance(15 * 60 - 30)  # ... so idle counts from the sign-in
    assert client.get("/api/me", headers=headers).status_code == 401


def test_an_admin_has_one_session_at_a_time(client: TestClient, studio: Studio) -> None:
    first = sign_in(client, "admin")
    second = sign_in(client, "admin")
    assert client.get("/api/me", headers=first).status_code == 401
    assert client.get("/api/me", headers=second).status_code == 200
    dealer_1, dealer_2 = sign_in(client, "dealer"), sign_in(client, "dealer")  # dealers may have two
    assert [client.get("/api/me", headers=h).status_code for h in (dealer_1, dealer_2)] == [200, 200]
    replaced = [r for r in studio.users.access_log.read() if r.kind == a.SESSION_REPLACED]
    assert [(r.actor, r.data["sessions"]) for r in replaced] == [("admin:admin", 1)]


def make_app(tmp_path: Path, clock: ManualClock, policy: AccessPolicy) -> FastAPI:
    return create_app(StudioSettings(database=str(tmp_path / "p.db"), demo=True, access=policy), clock)


def test_session_rules_come_from_the_policy(tmp_path: Path, clock: ManualClock) -> None:
    policy = policy_from_mapping({"sessions": {"dealer": {"length_minutes": 60, "idle_minutes": 5,
                                                          "single_session": True}}})  # fmt: skip
    assert policy.sessions[Role.DEALER] == RoleSessions(timedelta(hours=1), timedelta(minutes=5), single=True)
    with TestClient(make_app(tmp_path, clock, policy)) as client:
        first = sign_in(client, "dealer")
        second = sign_in(client, "dealer")
        assert client.get("/api/me", headers=first).status_code == 401
        clock.advance(4 * 60)
        assert client.get("/api/me", headers=second).status_code == 200
        clock.advance(5 * 60)
        assert client.get("/api/me", headers=second).status_code == 401


def test_the_shipped_policy_file_is_the_built_in_policy() -> None:
    assert load_access_policy(Path(__file__).parents[2] / "config" / "access.toml") == AccessPolicy()


@pytest.mark.parametrize(
    "document",
    [
        {"sessions": {"croupier": {}}},
        {"sessions": {"game_server": {}}},
        {"sessions": {"dealer": {"idle_minutes": 0}}},
        {"sessions": {"dealer": {"single_session": "yes"}}},
        {"lockout": {"failures": 0}},
        {"lockout": {"failures": True}},
        {"server": {"https": 1}},
        {"sesions": {}},
    ],
)
def test_a_bad_policy_is_refused_saying_where(document: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=r"^access"):
        policy_from_mapping(document)


def test_session_cookies_are_secure_when_served_over_https(tmp_path: Path, clock: ManualClock) -> None:
    with TestClient(make_app(tmp_path, clock, AccessPolicy(https=True)), base_url="https://studio.test") as client:
        response = client.post("/api/login", json={"name": "dealer", "password": "dealer"})
        cookie = response.headers["set-cookie"]
        assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_session_cookies_are_not_secure_over_plain_http(client: TestClient) -> None:
    response = client.post("/api/login", json={"name": "dealer", "password": "dealer"})
    assert "Secure" not in response.headers["set-cookie"]


# Passwords.


def test_studio_users_add_refuses_a_password_under_ten_characters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: Any) -> None:  # fmt: skip
    database = str(tmp_path / "u.db")
    monkeypatch.setenv("STUDIO_PASSWORD", "123456789")
    assert main(["users", "add", "ann", "--role", "dealer", "--database", database]) == 1
    assert "has 9 characters; at least 10 are needed" in capsys.readouterr().err
    assert main(["users", "add", "demo-ann", "--role", "dealer", "--demo", "--database", database]) == 0
    monkeypatch.setenv("STUDIO_PASSWORD", "1234567890")
    assert main(["users", "add", "ann", "--role", "dealer", "--database", database]) == 0
    assert main(["users", "list", "--database", database]) == 0
    listed = capsys.readouterr().out
    assert "added demo-ann" in listed and "added ann" in listed


def test_the_database_comes_from_the_environment_or_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: Any) -> None:  # fmt: skip
    database = tmp_path / "env.db"
    monkeypatch.setenv("STUDIO_PASSWORD", "1234567890")
    monkeypatch.setenv("STUDIO_DATABASE_URL", f"sqlite:///{database}")
    assert main(["users", "add", "ann", "--role", "dealer"]) == 0
    monkeypatch.delenv("STUDIO_DATABASE_URL")
    secret = tmp_path / "database-url"
    secret.write_text(f"sqlite:///{database}\n")
    monkeypatch.setenv("STUDIO_DATABASE_URL_FILE", str(secret))
    capsys.readouterr()
    assert main(["users", "list"]) == 0
    assert capsys.readouterr().out.startswith("ann ")
    assert main(["log", "verify"]) == 0  # the access log: the account's creation
    assert "OK        access log _access: 1 records" in capsys.readouterr().out


# Headers.

PAGES = sorted(path.name for path in STATIC.glob("*.html"))


def test_no_page_has_inline_script_or_style() -> None:
    for path in [*STATIC.glob("*.html"), *STATIC.glob("*.js")]:
        text = path.read_text()
        assert "<script>" not in text and " style=" not in text and "javascript:" not in text, path.name
        assert not any(f" on{event}=" in text for event in ("click", "load", "submit", "change", "input")), path.name
        assert "style: " not in text, path.name  # el(..., {style: ...}) sets a style attribute, which CSP refuses


def test_every_answer_carries_the_security_headers(client: TestClient, game_server: dict[str, str]) -> None:
    answers = [client.get(f"/static/{page}") for page in PAGES]
    paths = ("/static/common.js", "/static/style.css", "/api/studio", "/api/me", "/healthz", "/readyz", "/metrics",
             "/nowhere", "/openapi.json")  # fmt: skip
    answers += [client.get(path) for path in paths]
    answers += [client.get("/", follow_redirects=False), client.get("/api/me", headers=game_server)]
    answers.append(client.post("/api/login", content=b"x" * 70_000, headers={"Content-Type": "application/json"}))
    for response in answers:
        where = (response.request.url.path, response.status_code)
        policy = response.headers.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in policy and "script-src 'self';" in policy, where
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, where
        assert response.headers["x-content-type-options"] == "nosniff", where
        assert response.headers["referrer-policy"] == "no-referrer", where
        assert response.headers["x-frame-options"] == "DENY", where
    assert {response.status_code for response in answers} >= {200, 307, 401, 404, 413}


def test_the_docs_page_allows_exactly_its_own_inline_script(client: TestClient) -> None:
    response = client.get("/docs")
    assert response.status_code == 200
    policy = response.headers["content-security-policy"]
    assert policy == docs_policy(response.content)
    assert policy.count("'sha256-") == 1 and "frame-ancestors 'none'" in policy and "unsafe-eval" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"


# A database outage.


@pytest.fixture
def outage(studio: Studio) -> Iterator[Any]:
    """The accounts' database stops answering (its file cannot be opened), then comes back."""
    real = studio.users._engine  # the store's own connection, swapped for one that fails
    broken = create_engine("sqlite:////nonexistent-folder/studio.db")

    class Switch:
        def down(self) -> None:
            studio.users._engine = broken

        def up(self) -> None:
            studio.users._engine = real

    yield Switch()
    studio.users._engine = real
    broken.dispose()


def test_a_database_outage_is_503_with_the_reason_and_the_session_survives(client: TestClient, outage: Any) -> None:
    dealer = sign_in(client, "dealer")
    outage.down()
    response = client.get("/api/me", headers=dealer)
    assert response.status_code == 503
    assert response.json()["detail"].startswith("the studio cannot read its accounts (database unavailable): ")
    assert "unable to open database file" in response.json()["detail"]
    assert response.headers["retry-after"] == "5"
    assert client.post("/api/login", json={"name": "dealer", "password": "dealer"}).status_code == 503
    assert client.post("/api/tables/T1/shuffle", headers=dealer).status_code == 503
    outage.up()
    assert client.get("/api/me", headers=dealer).status_code == 200  # the same session, still good


def test_a_game_servers_key_confirmed_lately_is_honoured_through_an_outage(
    client: TestClient, studio: Studio, clock: ManualClock, game_server: dict[str, str], outage: Any
) -> None:
    other = {"X-API-Key": studio.users.add_api_key("operator-2")}  # never used before the outage
    revoked = {"X-API-Key": studio.users.add_api_key("operator-3")}
    for headers in (game_server, revoked):
        assert client.get("/api/me", headers=headers).status_code == 200
    studio.users.revoke_api_keys("operator-3")
    outage.down()
    assert client.get("/api/me", headers=game_server).json()["name"] == "operator-1"
    assert client.get("/api/me", headers=other).status_code == 503
    assert client.get("/api/me", headers=revoked).status_code == 503
    clock.advance(10 * 60 + 1)
    assert client.get("/api/me", headers=game_server).status_code == 503  # remembered 10 minutes at most
    outage.up()
    assert client.get("/api/me", headers=game_server).status_code == 200


def test_a_console_socket_during_an_outage_is_closed_try_again_later(client: TestClient, outage: Any) -> None:
    from starlette.websockets import WebSocketDisconnect  # noqa: PLC0415

    dealer = sign_in(client, "dealer")
    outage.down()
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect("/ws/tables/T1", headers=dealer) as ws:
        ws.receive_json()
    assert closed.value.code == 1013 and "database unavailable" in closed.value.reason
    outage.up()
    with client.websocket_connect("/ws/tables/T1", headers=dealer) as ws:
        assert ws.receive_json()["table"] == "T1"


def test_the_access_log_chain_holds_across_processes(tmp_path: Path, clock: ManualClock) -> None:
    """Two processes' stores on one database append to the one access stream without forking it."""
    settings = StudioSettings(database=str(tmp_path / "two.db"), demo=True)
    first, second = create_app(settings, clock), create_app(StudioSettings(database=settings.database), clock)
    with TestClient(first) as one, TestClient(second) as two:
        for n in range(5):
            login(one, "dealer", "dealer" if n % 2 else "wrong")
            login(two, "pitboss", "pitboss" if n % 2 else "wrong")
        records = first.state.studio.users.access_log.read()
        assert verify_chain(records).ok and [r.seq for r in records] == list(range(1, len(records) + 1))
        assert len([r for r in records if r.kind in (a.SIGNED_IN, a.SIGN_IN_FAILED)]) == 10
