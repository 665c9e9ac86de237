"""The camera's evidence hashes in the log: a read carries them from the device report to every event that logs it,
and a log written before they existed still decodes, replays and verifies, byte for byte.

`tests/data/log_before_evidence_hashes.json` was written by the code before the hashes (the commit it names): a shoe
burned and dealt by a camera (raw: the crop's path) and a smart shoe, an unreadable read that suspended the table, a
read while suspended, a correction, the error burn: every kind of record that carries a read.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from studio.clock import ManualClock
from studio.domain import commands as c
from studio.domain import events as e
from studio.domain.cards import Card
from studio.domain.procedure import Phase, TableState, decide, evolve
from studio.domain.procedure_config import ProcedureConfig
from studio.domain.reads import DeviceReport, ReportKind
from studio.domain.reconcile import Reconciler
from studio.domain.records import NewRecord
from studio.domain.rules import Side
from studio.store_sql import SqlEventStore
from studio.supervisor import command_for
from studio.table_service import TableService
from studio_cli.main import main

OLD_LOG = Path(__file__).parent / "data" / "log_before_evidence_hashes.json"
CROP_HASH = "ab" * 32
BOXES_HASH = "cd" * 32
AT = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
READ_KINDS = {"CardBurned", "CardDealt", "TableSuspended", "CardReadWhileSuspended"}


def old_records() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(OLD_LOG.read_text())["records"]
    return records


def camera_read(code: str | None, seq: int) -> c.CardRead:
    return c.CardRead(Card.parse(code) if code else None, "cam-1", seq, 0.97, f"evidence/cam-1/{seq:06d}.png",
                      CROP_HASH, BOXES_HASH)  # fmt: skip


def test_old_records_decode_with_no_hashes_and_encode_back_to_the_same_form() -> None:
    kinds = set()
    for record in old_records():
        event = e.decode(record["kind"], record["data"], record["raw"])
        if isinstance(event, (e.CardBurned, e.CardDealt, e.TableSuspended, e.CardReadWhileSuspended)):
            kinds.add(record["kind"])
            read = event.read
            assert read is None or (read.evidence_sha256 is None and read.evidence_boxes_sha256 is None)
        assert e.encode(event) == (record["kind"], record["data"], record["raw"])
    assert kinds == READ_KINDS


def test_a_log_written_before_the_hashes_verifies_resumes_and_takes_hashed_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "old.db"
    store = SqlEventStore(f"sqlite:///{database}")
    records = old_records()
    written = store.append(
        "T1",
        [NewRecord(datetime.fromisoformat(r["at"]), r["actor"], r["kind"], r["data"], r["raw"]) for r in records],
        0,
    )
    assert [r.hash for r in written] == [r["hash"] for r in records]  # the same chain, hash for hash
    assert main(["log", "verify", str(database)]) == 0
    assert "20 records, 1 results confirmed" in capsys.readouterr().out

    # The table resumes from the old log and logs a camera read with its hashes after it.
    config = ProcedureConfig(burn_after_shuffle=2, burn_after_error=1, betting_seconds=10, allow_early_close=True)
    service = TableService("T1", store, ManualClock(AT), config)
    assert service.state.phase is Phase.READY and service.seq == 20
    service.handle(c.OpenBetting("dealer:alice"))
    service.handle(c.CloseBetting("dealer:alice"))
    logged = service.handle(c.DrawCard("device:cam-1", camera_read("QH", 8)))
    record = logged[0].record
    assert record.kind == "CardDealt" and record.raw == "evidence/cam-1/000008.png"
    assert record.data["evidence_sha256"] == CROP_HASH and record.data["evidence_boxes_sha256"] == BOXES_HASH
    store.close()
    assert main(["log", "verify", str(database)]) == 0
    capsys.readouterr()


def test_every_event_that_logs_a_read_keeps_its_hashes() -> None:
    state = evolve(evolve(_ready(), e.BettingOpened(1, "G1", AT, AT)), e.BettingClosed(1, "G1"))
    dealt = decide(state, c.DrawCard("device:cam-1", camera_read("9H", 1)), AT)[0]
    assert isinstance(dealt, e.CardDealt)
    suspended = decide(state, c.DrawCard("device:cam-1", camera_read(None, 2)), AT)[0]
    assert isinstance(suspended, e.TableSuspended)
    state = evolve(state, suspended)
    assert state.suspension is not None and state.suspension.read is not None
    assert state.suspension.read.evidence_sha256 == CROP_HASH
    assert state.suspension.read.evidence_boxes_sha256 == BOXES_HASH
    while_suspended = decide(state, c.DrawCard("device:cam-1", camera_read("5C", 3)), AT)[0]
    assert isinstance(while_suspended, e.CardReadWhileSuspended)
    burning = evolve(_ready(burning=True), e.BurnRequired("shuffle", 2))
    burned = decide(burning, c.DrawCard("device:cam-1", camera_read("2D", 4)), AT)[0]
    assert isinstance(burned, e.CardBurned)
    for event in (dealt, suspended, while_suspended, burned):
        kind, data, raw = e.encode(event)
        assert data["evidence_sha256"] == CROP_HASH and data["evidence_boxes_sha256"] == BOXES_HASH
        assert e.decode(kind, data, raw) == event


def test_a_read_without_evidence_logs_no_hash_fields() -> None:
    event = e.CardDealt(1, 1, Side.PLAYER, c.CardRead(Card.parse("QH"), "shoe-1", 3, 1.0, "0203"), game_id="G1")
    _, data, _ = e.encode(event)
    assert "evidence_sha256" not in data and "evidence_boxes_sha256" not in data


def test_the_device_report_hashes_reach_the_command_alone_and_with_a_second_source() -> None:
    report = DeviceReport("cam-1", ReportKind.CARD, AT, Card.parse("QH"), 4, 0.95, "e/cam-1/4.png", "", CROP_HASH,
                          BOXES_HASH)  # fmt: skip
    command = command_for(report)
    assert isinstance(command, c.DrawCard) and command.read.evidence_sha256 == CROP_HASH
    misread = command_for(DeviceReport("cam-1", ReportKind.MISREAD, AT, None, 5, 0.3, "e/5.png", "", CROP_HASH))
    assert isinstance(misread, c.DrawCard) and misread.read.card is None
    assert misread.read.evidence_sha256 == CROP_HASH and misread.read.raw == "e/5.png"

    reconciler = Reconciler("shoe-1", "cam-1")
    shoe = DeviceReport("shoe-1", ReportKind.CARD, AT, Card.parse("QH"), 9, 1.0, "0a0b")
    assert reconciler.offer(shoe, 0.0) == []
    [agreed] = reconciler.offer(report, 0.5)
    assert isinstance(agreed, c.DrawCard)
    assert agreed.read.source == "shoe-1" and agreed.read.raw == "shoe-1: 0a0b | cam-1: e/cam-1/4.png"
    assert (agreed.read.evidence_sha256, agreed.read.evidence_boxes_sha256) == (CROP_HASH, BOXES_HASH)


def _ready(burning: bool = False) -> TableState:
    """A table past its shuffle and cut (burning, or ready once the burn is done)."""
    state = TableState("T1", ProcedureConfig(burn_after_shuffle=2))
    for event in (e.ShuffleConfirmed(1, "dealer:alice"), e.CutCardPlaced(1, 364)):
        state = evolve(state, event)
    if burning:
        return state
    state = evolve(state, e.BurnRequired("shuffle", 2))
    for code in ("2D", "3D"):
        state = evolve(state, e.CardBurned(c.CardRead(Card.parse(code), "shoe-1")))
    return evolve(state, e.BurnCompleted("shuffle"))
