"""Fuzzing the HTTP API from its OpenAPI document (schemathesis): every operation, as every kind of caller.

Requests that fit the schema and requests that break it go to the server tests' studio (tests/server/conftest.py,
its fixtures imported by tests/fuzz/conftest.py), with table T1 open for bets and a funded player, sent by nobody,
each role, and a game server. Each response must be below 500, conform to the schema the document declares for its
status, and be a 4xx if the request broke the schema; an exception inside the server fails the test.

Schemathesis generates the cases (`as_strategy`) and checks the responses (`validate_response`); the app's own test
client sends them, so that the studio starts and stops with the test and a server error is re-raised here. (Its
pytest loader for fixtures, `schemathesis.pytest.from_fixture`, fails on pytest 9.2: it sets `node._nodeid`.)
Not checked: that every status is declared (the document lists 200 and 422; 401/403/404/409 are the README's).
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import given, note
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import status_code_conformance
from starlette.websockets import WebSocketDisconnect

from dealer_ui.routes.problems import MAX_ID
from dealer_ui.runtime import Studio
from studio.domain.paytable import BetType
from studio.domain.roles import Role
from tests.fuzz.support import fuzz
from tests.server.conftest import Desk, session_for

CALLERS = ("anonymous", "dealer", "pit_boss", "surveillance", "admin", "game_server")
# Statuses a request that fits the schema may get: refused for who asks, for what does not exist, for the
# procedure's phase, or for content the schema cannot express (a card code, a time, a chat message).
CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {"checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "401", "403", "404", "409", "422"]}}}
)
# Known, reported, left to the file's owner: the feed reads `after` into a SQLite query unbounded.


@pytest.fixture
def known(client: TestClient, studio: Studio, game_server: dict[str, str]) -> dict[str, Any]:
    """T1 open for bets with player p1 funded by the game server; the values of real path parameters."""
    desk = Desk(client, studio, "T1", session_for(studio, "dl", Role.DEALER), session_for(studio, "pb", Role.PIT_BOSS))
    desk.to_ready()
    desk.ok("open-betting")
    assert client.post("/api/wallets/p1/deposit", headers=game_server, json={"amount": 100_000}).status_code == 200
    round_ = studio.tables["T1"].service.state.round
    assert round_ is not None
    return {"table_id": "T1", "table": "T1", "player_id": "p1", "game_id": round_.game_id, "shoe": 1, "seq": 3,
            "name": "dealer"}  # fmt: skip


def credentials(caller: str, studio: Studio, game_server: dict[str, str]) -> dict[str, str]:
    if caller == "anonymous":
        return {}
    if caller == "game_server":
        return game_server
    return session_for(studio, caller, Role(caller))


def send(client: TestClient, case: Any, headers: dict[str, str]) -> Any:
    """The case as schemathesis would send it, through the app's test client (which re-raises server errors)."""
    request = case.as_transport_kwargs(base_url="http://testserver", headers=headers)
    assert not request["cookies"]  # the document declares no cookie parameters
    body = {"json": request["json"]} if "json" in request else {"content": request["data"]} if "data" in request else {}
    return client.request(
        request["method"], request["url"], params=request["params"], headers=request["headers"], **body
    )


def for_known_player(case: Any) -> st.SearchStrategy[Any]:
    """A request that fits the schema, made for the funded player p1 and a bet type the table offers, so that bets
    can go through."""
    if not isinstance(case.body, dict):
        return st.just(case)
    if "player_id" in case.body:
        case.body["player_id"] = "p1"
    if "bet_type" not in case.body:
        return st.just(case)
    return st.sampled_from([bet.value for bet in BetType] + ["2 way", "3 way"]).map(lambda name: with_bet(case, name))


def with_bet(case: Any, bet_type: str) -> Any:
    case.body["bet_type"] = bet_type
    return case


@pytest.mark.parametrize("caller", CALLERS)
def test_every_operation_as_every_caller(
    caller: str,
    client: TestClient,
    studio: Studio,
    game_server: dict[str, str],
    known: dict[str, Any],
    subtests: pytest.Subtests,
) -> None:
    schema = schemathesis.openapi.from_dict(client.app.openapi(), config=CONFIG)  # type: ignore[attr-defined]
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]  # an Err (invalid operation) fails here
    assert len(operations) > 40
    for operation in operations:
        names = {parameter.name for parameter in operation.path_parameters}
        real = {name: known[name] for name in names}
        strategy = st.one_of(
            *(operation.as_strategy(mode, path_parameters=path) for mode in GenerationMode for path in (None, real)),
            operation.as_strategy(GenerationMode.POSITIVE, path_parameters=real).flatmap(for_known_player),
        )

        @fuzz(8, database=None)  # the studio's state differs from run to run: a saved example would not replay
        @given(case=strategy)
        def check(case: Any) -> None:
            headers = credentials(caller, studio, game_server)  # a new session each time: a case may be a logout
            note(case.as_curl_command(headers=headers))
            response = send(client, case, headers)
            case.validate_response(response, excluded_checks=[status_code_conformance])

        with subtests.test(msg=f"{caller}: {operation.label}"):
            check()


# ---------------------------------------------------------------------------------------------------------------------
# What the fuzzing found, kept as plain examples


@pytest.mark.parametrize(
    "url", ["/api/settlements?after=9223372036854775808", "/api/tables/T1/chat?after=10000000000000000000"]
)
def test_an_id_past_the_database_range_is_refused_not_a_crash(
    client: TestClient, game_server: dict[str, str], url: str
) -> None:
    response = client.get(url, headers=game_server)
    assert response.status_code == 422 and "9223372036854775807" in response.text


@pytest.mark.parametrize("after", ["9223372036854775808", "-1", "9" * 5000])
def test_the_settlement_stream_refuses_an_after_out_of_range(
    client: TestClient, game_server: dict[str, str], after: str
) -> None:
    url = f"/ws/settlements?after={after}"
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect(url, headers=game_server) as websocket:
        websocket.receive_json()
    assert closed.value.code == 4400 and "after" in closed.value.reason


def test_content_refused_by_a_route_is_a_422_with_a_message_as_documented(
    client: TestClient, game_server: dict[str, str]
) -> None:
    refused = client.post(
        "/api/tables/T1/chat", headers=game_server, json={"player_id": "p1", "nickname": "n", "text": "\r"}
    )
    assert refused.status_code == 422 and refused.json()["detail"].startswith("message refused")
    declared = client.app.openapi()["paths"]["/api/tables/{table_id}/chat"]["post"]["responses"]["422"]  # type: ignore[attr-defined]
    schema = declared["content"]["application/json"]["schema"]
    assert schema["$ref"].endswith("/BadInput")


def test_the_feed_refuses_an_after_past_the_database_range(client: TestClient, game_server: dict[str, str]) -> None:
    assert client.get(f"/api/feed/T1?after={MAX_ID + 1}", headers=game_server).status_code == 422
    with (
        pytest.raises(WebSocketDisconnect) as closed,
        client.websocket_connect(f"/ws/feed/T1?after={MAX_ID + 1}", headers=game_server) as socket,
    ):
        socket.receive_text()
    assert closed.value.code == 4400


@pytest.mark.usefixtures("known")
def test_an_unknown_bet_type_is_refused_and_changes_nothing(client: TestClient, game_server: dict[str, str]) -> None:
    bet = {"bet_id": "b1", "player_id": "p1", "bet_type": "0", "stake": 1_000}
    refused = client.post("/api/tables/T1/bets", headers=game_server, json=bet)
    assert refused.status_code == 409 and "unknown bet type '0'" in refused.json()["detail"]
    assert client.get("/api/wallets/p1", headers=game_server).json()["balance"] == 100_000


def test_exports_are_served_as_the_document_declares(client: TestClient, studio: Studio, known: dict[str, Any]) -> None:
    path = "/api/surveillance/rounds/{game_id}/export"
    declared = client.app.openapi()["paths"][path]["get"]["responses"]["200"]["content"]  # type: ignore[attr-defined]
    pit_boss = session_for(studio, "pb", Role.PIT_BOSS)
    for file_format, media_type in (("csv", "text/csv"), ("json", "application/json")):
        url = path.format(game_id=known["game_id"]) + f"?format={file_format}"
        exported = client.get(url, headers=pit_boss)
        assert exported.status_code == 200 and exported.headers["content-type"].startswith(media_type)
        assert media_type in declared
