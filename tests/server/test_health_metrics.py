"""Operations: liveness and readiness (and what makes the studio not ready), the Prometheus metrics (counters that move
by exactly what the log gained, gauges read at scrape time), the log lines the studio writes about its tables, and the
log formats of `studio run`."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from dealer_ui import runtime
from dealer_ui.app import create_app
from dealer_ui.routes import health
from dealer_ui.runtime import Studio, StudioSettings
from studio.clock import ManualClock
from studio.domain.records import NewRecord, StoreError
from studio.store_sql import SqlEventStore
from studio.users import Role
from studio_cli.logs import JsonFormatter, TextFormatter, logging_config
from tests.server.conftest import NATURAL, T0, T1, Desk, session_for

REPO = Path(__file__).resolve().parents[2]
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(client: TestClient) -> Samples:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def moved(before: Samples, after: Samples) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The `studio_*_total` series that changed, and by how much (a series new since `before` counts from 0)."""
    return {
        key: after[key] - before.get(key, 0.0)
        for key in after
        if key[0].startswith("studio_") and key[0].endswith("_total") and after[key] != before.get(key, 0.0)
    }


def series(name: str, **labels: str) -> tuple[str, frozenset[tuple[str, str]]]:
    return name, frozenset(labels.items())


def ready(client: TestClient) -> tuple[int, dict[str, Any]]:
    response = client.get("/readyz")
    body: dict[str, Any] = response.json()
    return response.status_code, body


# Liveness and readiness.


def test_a_healthy_studio_is_alive_and_ready(client: TestClient, desk: Desk) -> None:
    response = client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    desk.to_ready()
    status, body = ready(client)
    assert status == 200 and body["status"] == "ready" and body["failing"] == []
    assert body["tables"]["T1"] == {
        "phase": "ready",
        "suspended": False,
        "sources": {"T1-keyed": {"state": "connected", "detail": ""}},
        "seq": desk.seq,
        "published_seq": desk.seq,
    }
    assert body["tables"]["T2"]["phase"] == "awaiting_shuffle"


def test_a_suspended_table_is_shown_but_does_not_make_the_studio_unready(client: TestClient, desk: Desk) -> None:
    desk.to_ready()
    desk.to_dealing()
    desk.ok("declare-error", json={"kind": "card exposed"})
    status, body = ready(client)
    assert status == 200
    table = body["tables"]["T1"]
    assert table["phase"] == "suspended" and table["suspended"] is True
    assert table["published_seq"] == table["seq"]  # the suspension itself is published at once


def test_the_operations_routes_need_no_account_and_are_in_the_openapi_schema(client: TestClient) -> None:
    client.cookies.clear()
    for path in ("/healthz", "/readyz", "/metrics"):
        assert client.get(path).status_code == 200
    assert {"/healthz", "/readyz", "/metrics"} <= set(client.get("/openapi.json").json()["paths"])


def test_not_ready_when_the_event_store_is_closed(client: TestClient, studio: Studio) -> None:
    studio.store.close()
    status, body = ready(client)
    assert status == 503 and body["status"] == "not ready"
    assert [failure["check"] for failure in body["failing"]] == ["event_store"]
    reason = body["failing"][0]["reason"]
    assert "is closed" in reason and "\n" not in reason
    assert set(body["tables"]) == {"T1", "T2"}  # still shown
    assert client.get("/healthz").status_code == 200  # alive all the same


def test_not_ready_when_the_event_store_does_not_answer_in_time(
    client: TestClient, studio: Studio, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def hanging(stream: str) -> int:
        release.wait(5)
        return 0

    monkeypatch.setattr(health, "STORE_TIMEOUT", 0.05)
    monkeypatch.setattr(studio.store, "last_seq", hanging)
    try:
        status, body = ready(client)
    finally:
        release.set()
    assert status == 503
    assert body["failing"] == [{"check": "event_store", "reason": "no answer within 0.05 s"}]


def test_not_ready_when_another_writer_appends_to_a_table(client: TestClient, studio: Studio, tmp_path: Path) -> None:
    with SqlEventStore(f"sqlite:///{tmp_path / 's.db'}") as intruder:
        intruder.append("T2", [NewRecord(T0, "system", "TableOpened", {"by": "someone"})], 0)
    status, body = ready(client)
    assert status == 503
    assert body["failing"] == [
        {
            "check": "table T2 log",
            "reason": "the log ends at seq 1 but the table service is at seq 0: another writer appended to this table",
        }
    ]


def test_not_ready_while_a_tables_log_cannot_be_written(
    client: TestClient, desk: Desk, studio: Studio, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing_append(*_: object) -> None:
        raise StoreError("event store sqlite:///s.db: OperationalError: disk I/O error")

    monkeypatch.setattr(runtime, "LOG_RETRY", 3600.0)  # the table's own watch does not retry during the test
    monkeypatch.setattr(studio.store, "append", failing_append)
    assert desk.post("shuffle").status_code == 503
    status, body = ready(client)
    assert status == 503
    assert body["failing"] == [
        {
            "check": "table T1 log",
            "reason": "cannot be written: event store sqlite:///s.db: OperationalError: disk I/O error",
        }
    ]
    samples = scrape(client)
    assert value(samples, "studio_table_log_unavailable", table="T1") == 1
    assert value(samples, "studio_table_log_unavailable", table="T2") == 0
    assert value(samples, "studio_table_settlement_pending", table="T1") == 0


def test_not_ready_when_a_tables_supervisor_stopped(client: TestClient) -> None:
    async def stop_supervisor() -> None:
        for task in asyncio.all_tasks():
            if task.get_name() == "supervisor:T2":
                task.cancel()
                await asyncio.wait([task])

    assert client.portal is not None
    client.portal.call(stop_supervisor)
    status, body = ready(client)
    assert status == 503
    assert body["failing"] == [{"check": "table T2 supervisor", "reason": "the card-source supervisor is not running"}]


# Metrics.


def test_counters_move_by_exactly_what_a_round_a_suspension_and_a_void_logged(client: TestClient, desk: Desk) -> None:
    start = scrape(client)
    assert value(start, "studio_rounds_completed_total", table="T1") == 0
    assert value(start, "studio_suspensions_total", table="T2", reason="dealer_declared") == 0

    desk.to_ready()  # shuffle, cut, 2 cards burned
    desk.to_dealing()
    desk.deal(*NATURAL)
    after_round = scrape(client)
    assert moved(start, after_round) == {
        series("studio_cards_read_total", table="T1", source="keyed", use="burned"): 2,
        series("studio_cards_read_total", table="T1", source="keyed", use="dealt"): 4,
        series("studio_rounds_completed_total", table="T1"): 1,
    }

    desk.to_dealing()
    desk.deal("9H")
    desk.ok("declare-error", json={"kind": "card exposed"})
    suspended = scrape(client)
    assert moved(after_round, suspended) == {
        series("studio_cards_read_total", table="T1", source="keyed", use="dealt"): 1,
        series("studio_suspensions_total", table="T1", reason="dealer_declared"): 1,
    }
    desk.card("5C")  # a card out while the pit boss is called: kept for them, not dealt
    desk.ok("void", desk.pit_boss, {"reason": "card exposed"})
    voided = scrape(client)
    assert moved(suspended, voided) == {
        series("studio_cards_read_total", table="T1", source="keyed", use="while_suspended"): 1,
        series("studio_rounds_voided_total", table="T1"): 1,
    }


def test_gauges_show_phase_suspension_sources_and_how_far_the_feed_is_behind(
    client: TestClient, desk: Desk, clock: ManualClock
) -> None:
    samples = scrape(client)
    assert value(samples, "studio_table_phase", table="T1", phase="awaiting_shuffle") == 1
    assert value(samples, "studio_table_phase", table="T1", phase="ready") == 0
    assert value(samples, "studio_source_state", table="T1", source="T1-keyed", state="connected") == 1
    assert value(samples, "studio_source_state", table="T1", source="T1-keyed", state="disconnected") == 0
    assert ("studio_feed_last_published_age_seconds", frozenset({("table", "T1")})) not in samples  # nothing yet

    desk.to_ready()
    desk.to_dealing()
    clock.advance(30)
    desk.ok("declare-error", json={"kind": "card exposed"})  # published at once (table_suspended)
    clock.advance(12.5)
    assert desk.card("5S") == ["CardReadWhileSuspended"]  # held back for the pit boss
    samples = scrape(client)
    assert value(samples, "studio_table_phase", table="T1", phase="suspended") == 1
    assert value(samples, "studio_table_suspended", table="T1") == 1
    assert value(samples, "studio_table_suspended", table="T2") == 0
    assert value(samples, "studio_log_seq", table="T1") == desk.seq
    assert value(samples, "studio_feed_lag_records", table="T1") == 1  # the card read, held for the pit boss
    assert value(samples, "studio_feed_last_published_age_seconds", table="T1") == 12.5  # the suspension's

    desk.ok("continue", desk.pit_boss, {"reason": "nothing seen"})
    samples = scrape(client)
    assert value(samples, "studio_table_suspended", table="T1") == 0
    assert value(samples, "studio_feed_lag_records", table="T1") == 0
    assert value(samples, "studio_feed_last_published_age_seconds", table="T1") == 0


def test_feed_subscribers(client: TestClient, desk: Desk, studio: Studio) -> None:
    desk.to_ready()
    key = {"X-API-Key": studio.users.add_api_key("operator-1")}
    assert value(scrape(client), "studio_feed_subscribers", table="T1") == 0
    with client.websocket_connect("/ws/feed/T1", headers=key) as ws:
        desk.ok("open-betting")
        assert [ws.receive_json()["type"] for _ in range(2)] == ["shoe_started", "round_opened"]  # subscribed by now
        samples = scrape(client)
        assert value(samples, "studio_feed_subscribers", table="T1") == 1
        assert value(samples, "studio_feed_subscribers", table="T2") == 0


def test_each_app_counts_on_its_own_registry(client: TestClient, desk: Desk, tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "t1.toml").write_text(T1)
    settings = StudioSettings(str(tmp_path / "other" / "s.db"), (tmp_path / "other" / "t1.toml",))
    other = create_app(settings, ManualClock(T0))
    desk.to_ready()
    with TestClient(other) as other_client:
        burned = series("studio_cards_read_total", table="T1", source="keyed", use="burned")
        assert burned not in scrape(other_client)  # nothing read there
    assert value(scrape(client), "studio_cards_read_total", table="T1", source="keyed", use="burned") == 2


def test_counters_start_at_zero_in_a_new_process_whatever_the_log_holds(tmp_path: Path, app: FastAPI) -> None:
    with TestClient(app) as client:
        studio: Studio = app.state.studio
        desk = Desk(client, studio, "T1", session_for(studio, "dealer", Role.DEALER), {})
        desk.to_ready()
        logged = desk.seq
    restarted = create_app(StudioSettings(str(tmp_path / "s.db"), (tmp_path / "t1.toml",)), ManualClock(T0))
    with TestClient(restarted) as client:
        samples = scrape(client)
    assert not any(key[0] == "studio_cards_read_total" for key in samples)
    assert value(samples, "studio_log_seq", table="T1") == logged
    assert value(samples, "studio_feed_last_published_age_seconds", table="T1") == 0


# The studio's log lines about its tables.


def test_suspensions_resumptions_voids_and_results_are_logged_with_their_fields(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    desk.to_ready()
    desk.to_dealing()
    caplog.set_level(logging.INFO, logger="dealer_ui.table_log")
    desk.ok("declare-error", json={"kind": "card exposed", "detail": "P1 flashed"})
    desk.ok("void", desk.pit_boss, {"reason": "card exposed"})
    void_seq = desk.seq - 2  # the void, the end of the suspension, then the burn it requires
    desk.card("8C")  # that burn
    desk.to_dealing()
    desk.ok("declare-error", json={"kind": "dropped"})
    desk.ok("continue", desk.pit_boss, {"reason": "picked up, not seen"})
    desk.card("8D")  # the burn after the error
    desk.deal(*NATURAL)
    lines = [(r.levelname, r.getMessage(), r.__dict__) for r in caplog.records if r.name == "dealer_ui.table_log"]
    assert [(level, message) for level, message, _ in lines] == [
        ("WARNING", "table T1 suspended: dealer_declared: card exposed: P1 flashed"),
        ("WARNING", "round T1-20240501-120000-0001 voided by pit_boss:pitboss: card exposed"),
        ("WARNING", "table T1 suspended: dealer_declared: dropped"),
        ("INFO", "table T1 resumed by pit_boss:pitboss: picked up, not seen"),
        ("INFO", "round T1-20240501-120000-0002: player wins (player 9, banker 5)"),
    ]
    voided = lines[1][2]
    assert (voided["table"], voided["game_id"], voided["actor"], voided["seq"]) == (
        "T1",
        "T1-20240501-120000-0001",
        "pit_boss:pitboss",
        void_seq,
    )
    assert (lines[0][2]["table"], lines[0][2]["game_id"]) == ("T1", voided["game_id"])  # the round it stopped


# Log formats.


def record(message: str = "table %s suspended", *args: object, **extra: Any) -> logging.LogRecord:
    made = logging.LogRecord("dealer_ui.table_log", logging.WARNING, __file__, 1, message, args or ("T1",), None)
    made.created = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC).timestamp()
    made.__dict__.update(extra)
    return made


def test_a_json_line_has_the_time_in_utc_the_level_logger_message_and_the_extra_fields() -> None:
    line = JsonFormatter().format(record(table="T1", game_id="T1-20240501-120000-0001", actor="dealer:d", seq=7))
    assert "\n" not in line
    assert json.loads(line) == {
        "time": "2024-05-01T12:00:00.123Z",
        "level": "WARNING",
        "logger": "dealer_ui.table_log",
        "message": "table T1 suspended",
        "table": "T1",
        "game_id": "T1-20240501-120000-0001",
        "actor": "dealer:d",
        "seq": 7,
    }
    assert datetime.fromisoformat(json.loads(line)["time"]).utcoffset() is not None


def test_a_json_line_stays_one_line_and_valid_whatever_it_carries() -> None:
    try:
        raise ValueError("bad\nthing")
    except ValueError:
        failed = record("two\nlines %s", 'and "quotes"', at=T0, odd=object())
        failed.exc_info = sys.exc_info()
    line = JsonFormatter().format(failed)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["message"] == 'two\nlines and "quotes"'
    assert entry["at"] == "2024-05-01T12:00:00+00:00"
    assert entry["odd"].startswith("<object object")
    assert entry["exception"].startswith("Traceback") and "ValueError: bad" in entry["exception"]


def test_a_field_never_hides_the_time_level_logger_or_message() -> None:
    entry = json.loads(JsonFormatter().format(record(level="nope", logger="nope", time="nope")))
    assert (entry["level"], entry["logger"], entry["time"]) == (
        "WARNING",
        "dealer_ui.table_log",
        "2024-05-01T12:00:00.123Z",
    )


def test_uvicorns_request_lines_are_taken_apart_and_secrets_in_query_strings_masked() -> None:
    request = ("10.0.0.9:5123", "GET", "/ws/feed/T1?after=3&token=s3cret", "1.1", 101)
    access = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d', request, None)
    entry = json.loads(JsonFormatter().format(access))
    assert entry["message"] == '10.0.0.9:5123 - "GET /ws/feed/T1?after=3&token=[redacted] HTTP/1.1" 101'
    assert (entry["client"], entry["method"], entry["path"], entry["status"]) == (
        "10.0.0.9:5123",
        "GET",
        "/ws/feed/T1?after=3&token=[redacted]",
        101,
    )
    assert "s3cret" not in TextFormatter().format(access)


def test_a_text_line_for_a_terminal() -> None:
    line = TextFormatter().format(record(table="T1", seq=7))
    assert line == "2024-05-01T12:00:00.123Z WARNING dealer_ui.table_log: table T1 suspended [table=T1 seq=7]"


def test_the_configuration_sends_the_studios_and_uvicorns_lines_through_one_formatter() -> None:
    with pytest.raises(ValueError, match="not one of text, json"):
        logging_config("xml")
    program = """if True:
        import logging
        import uvicorn
        from studio_cli.logs import logging_config
        uvicorn.Config("dealer_ui.app:create_app", log_config=logging_config("json"), log_level="info")
        logging.getLogger("uvicorn.error").info("Started server process")
        logging.getLogger("uvicorn.access").info('%s - "%s %s HTTP/%s" %d', "1.2.3.4:5", "GET", "/readyz", "1.1", 200)
        logging.getLogger("dealer_ui.table_log").warning("suspended", extra={"table": "T1"})
        logging.getLogger("dealer_ui.table_log").debug("not shown")
    """
    done = subprocess.run(
        [sys.executable, "-c", program], check=False, cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    entries = [json.loads(line) for line in done.stderr.splitlines()]
    assert [(entry["logger"], entry["message"]) for entry in entries] == [
        ("uvicorn.error", "Started server process"),
        ("uvicorn.access", '1.2.3.4:5 - "GET /readyz HTTP/1.1" 200'),
        ("dealer_ui.table_log", "suspended"),
    ]
    assert entries[1]["status"] == 200 and entries[2]["table"] == "T1"
