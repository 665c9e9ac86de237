"""`studio log verify`'s audit of a table's log in a SQL store (studio/log_audit.py): the verdict of the one-pass
`audit`, whether the chain is checked in a second process beside the replay or in this one after it, on SQLite and
on PostgreSQL. (The tamperings, through the command line: tests/test_cli_simulate_log.py.)"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from studio import log_audit
from studio.domain import events as e
from studio.domain.audit import AuditVerdict, audit, audit_verdict, replay_stored
from studio.domain.chain import ChainVerdict, UnreadableRecord, verify_stored_chain
from studio.domain.events import encode
from studio.domain.records import NewRecord, StoredEvent
from studio.domain.rules import Winner
from studio.simulation import seeded_shoe, simulation
from studio.store_sql import SqlEventStore

START = datetime(2026, 11, 29, 15, 54, 32, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'studio.db'}"
    return str(request.getfixturevalue("postgres_url"))


def dealt(url: str, forge: bool) -> None:
    """A shoe dealt on table T1; with `forge`, a result the cards do not give logged after it, and a record more."""
    with SqlEventStore(url) as store:
        for _ in simulation(store, START, table_id="T1").deal_shoe(seeded_shoe(8, random.Random(3))):
            pass
        if forge:
            fake = e.RoundCompleted(99, "T1-x", (), (), 9, 0, Winner.PLAYER, True, False, False, False)
            kind, data, raw = encode(fake)
            seq = store.last_seq("T1")
            store.append("T1", [NewRecord(START, "dealer:mallory", kind, data, raw)], seq)
            store.append("T1", [NewRecord(START, "dealer:mallory", "Note", {"n": 1}, None)], seq + 1)


@pytest.mark.parametrize("forge", [False, True], ids=["intact", "a forged result"])
def test_the_audit_of_a_stored_log_is_the_one_pass_audits_verdict(
    url: str, forge: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    dealt(url, forge)
    with SqlEventStore(url) as store:
        expected = audit(store.read("T1"))
        assert expected.ok is not forge and expected.rounds > 50
        watched: list[int] = []

        def watch(rows: Iterable[StoredEvent], total: int) -> Iterable[StoredEvent]:
            watched.append(total)
            return rows

        for parallel_from in (0, 10**9):  # the chain in a second process; in this one
            monkeypatch.setattr(log_audit, "PARALLEL_FROM", parallel_from)
            assert log_audit.audit_stream(store, "T1", watch=watch) == expected
        assert watched == [store.last_seq("T1")] * 2


def test_the_two_halves_make_the_verdict_one_pass_makes() -> None:
    chain_ok = ChainVerdict(True, 10, None, "10 record(s) verified")
    replay_ok = AuditVerdict("T1", True, 10, 2, None, "10 records, 2 results confirmed")
    replay_fault = AuditVerdict("T1", False, 4, 1, 5, "seq 5 (CardDealt): a card was dealt with no round in play")
    broken = ChainVerdict(False, 7, 8, "seq 8 does not match its hash: the record was edited")
    assert audit_verdict("T1", chain_ok, replay_ok) == replay_ok
    assert audit_verdict("T1", chain_ok, replay_fault) == replay_fault
    for replay in (replay_ok, replay_fault):  # a broken chain is the verdict wherever the replay stopped
        assert audit_verdict("T1", broken, replay) == AuditVerdict(
            "T1", False, 7, 0, 8, "hash chain broken: seq 8 does not match its hash: the record was edited"
        )
    changed = audit_verdict("T1", chain_ok, dataclasses.replace(replay_ok, records=9))
    assert not changed.ok and "changed while it was checked" in changed.reason


def test_a_replayed_row_that_is_not_json_stops_the_replay_for_the_chain_to_judge() -> None:
    rows = [(1, "ShuffleConfirmed", '{"dealer":"dealer:sim","shoe":1}', None), (2, "CutCardPlaced", '{"cards', None)]
    outcome = replay_stored("T1", rows)
    assert isinstance(outcome, UnreadableRecord) and outcome.seq == 2
    assert verify_stored_chain([]) == ChainVerdict(True, 0, None, "0 record(s) verified")
