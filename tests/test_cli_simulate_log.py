"""`studio simulate` (DESIGN.md §6 contract) and `studio log verify|show|export` on a real SQLite file."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from studio.domain import events as e
from studio.domain.cards import parse_cards
from studio.domain.events import encode
from studio.domain.records import NewRecord, StoreError
from studio.domain.rules import Winner, outcome
from studio.simulation import seeded_shoe, simulation
from studio.store_memory import MemoryEventStore
from studio.store_sql import SqlEventStore
from studio_cli import log_command
from studio_cli.main import main

START = datetime(2026, 11, 29, 15, 54, 32, tzinfo=UTC)


def lines(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    assert main(["simulate", *args, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def write_shoe(tmp_path: Path, seed: int = 5) -> tuple[Path, list[str]]:
    codes = [card.code for card in seeded_shoe(8, random.Random(seed))]
    path = tmp_path / "shoe.txt"
    path.write_text(" ".join(codes))
    return path, codes


def test_simulate_a_given_shoe_follows_the_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, codes = write_shoe(tmp_path)
    out = lines(capsys, "--shoe", str(path))
    assert out[0] == {"burn": codes[:6], "reason": "shuffle"}
    rounds = out[1:]
    drawn = 6
    for number, line in enumerate(rounds, start=1):
        assert line["round"] == number
        player, banker = line["player"], line["banker"]
        assert isinstance(player, list) and isinstance(banker, list)
        # Cards come off the shoe in order: P, B, P, B, then third cards.
        used = codes[drawn : drawn + len(player) + len(banker)]
        assert used[:4] == [player[0], banker[0], player[1], banker[1]]
        drawn += len(used)
        result = outcome(parse_cards(" ".join(player)), parse_cards(" ".join(banker)))
        assert line["winner"] == result.winner.value
        assert (line["player_total"], line["banker_total"]) == (result.player_total, result.banker_total)
        assert line["natural"] == result.natural
        assert line["player_pair"] == result.player_pair and line["banker_pair"] == result.banker_pair
        assert str(line["game_id"]).startswith("SIM-")
    # The last hand draws the first card behind the cut card (364 cards in front of it); no round follows it.
    assert [line["last_hand"] for line in rounds] == [False] * (len(rounds) - 1) + [True]
    cards_before_last = 6 + sum(len(r["player"]) + len(r["banker"]) for r in rounds[:-1])  # type: ignore[arg-type]
    assert cards_before_last <= 364 < drawn


def test_cut_card_option_and_seeded_shoes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = write_shoe(tmp_path)
    short = lines(capsys, "--shoe", str(path), "--cut-card", "30")
    drawn = 6 + sum(len(r["player"]) + len(r["banker"]) for r in short[1:])  # type: ignore[arg-type]
    assert short[-1]["last_hand"] is True and drawn > 30 and drawn - 6 <= 30
    seeded = lines(capsys, "--decks", "8", "--seed", "9", "--shoes", "2", "--start", "2026-11-29T15:54:32Z")
    assert [line["reason"] for line in seeded if "burn" in line] == ["shuffle", "shuffle"]
    assert sum(1 for line in seeded if line.get("last_hand")) == 2
    assert seeded == lines(capsys, "--decks", "8", "--seed", "9", "--shoes", "2", "--start", "2026-11-29T15:54:32Z")
    assert seeded[1]["game_id"] == "SIM-20261129-155444-0001"  # 6 burns of 2 s each after the start


def test_simulate_refuses_a_shoe_the_table_would_stop_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("AS " * 20)
    assert main(["simulate", "--shoe", str(path), "--cut-card", "12", "--json"]) == 1
    assert "AS seen 9 times" in capsys.readouterr().err


def logged_table(tmp_path: Path) -> Path:
    db = tmp_path / "studio.db"
    store = SqlEventStore(f"sqlite:///{db}")
    sim = simulation(store, START, table_id="T1")
    for _ in sim.deal_shoe(seeded_shoe(8, random.Random(3))):
        pass
    store.close()
    return db


def test_log_verify_show_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = logged_table(tmp_path)
    assert main(["log", "verify", str(db)]) == 0
    verdict = capsys.readouterr().out
    assert verdict.startswith("OK") and "results confirmed" in verdict
    game = "T1-20261129-155444-0001"
    assert main(["log", "show", str(db), "--round", game]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert "BettingOpened" in shown[0] and game in shown[0] and "RoundCompleted" in shown[-1]
    out = tmp_path / "round.csv"
    assert main(["log", "export", str(db), "--round", game, "--format", "csv", "--out", str(out)]) == 0
    with out.open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert [row["kind"] for row in rows] == [line.split()[4] for line in shown]
    assert main(["log", "export", str(db), "--shoe", "1"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported[0]["kind"] == "ShuffleConfirmed" and exported[-1]["kind"] == "ShoeEnded"


def test_log_verify_names_the_first_edited_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = logged_table(tmp_path)
    with sqlite3.connect(db) as connection:
        seq, data = connection.execute(
            "SELECT seq, data FROM event_log WHERE kind = 'RoundCompleted' ORDER BY seq LIMIT 1 OFFSET 4"
        ).fetchone()
        forged = json.loads(data)
        forged["winner"] = "player" if forged["winner"] != "player" else "banker"
        connection.execute("UPDATE event_log SET data = ? WHERE seq = ?", (json.dumps(forged), seq))
    assert main(["log", "verify", str(db)]) == 3
    out = capsys.readouterr().out
    assert out.startswith("TAMPERED") and f"first bad record seq {seq}" in out


def test_log_verify_replays_results_even_when_the_chain_is_intact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A writer that forges a result through the store keeps the chain intact; the replay still catches it."""
    db = tmp_path / "forged.db"
    store = SqlEventStore(f"sqlite:///{db}")
    sim = simulation(store, START, table_id="T1")
    shoe = sim.deal_shoe(seeded_shoe(8, random.Random(3)))
    next(shoe), next(shoe)  # the burn and round 1
    state = sim.service.state
    assert state.last_result is not None
    # Deal round 2 by hand up to its last card, then log a result the cards do not give.
    last = state.last_result
    fake = e.RoundCompleted(2, "T1-x", last.player, last.banker, 9, 0, Winner.PLAYER, True, False, False, False)
    kind, data, raw = encode(fake)
    seq = store.last_seq("T1")
    store.append("T1", [NewRecord(START, "dealer:mallory", kind, data, raw)], seq)
    store.close()
    assert main(["log", "verify", str(db)]) == 3
    out = capsys.readouterr().out
    assert f"first bad record seq {seq + 1}" in out and "no round in play" in out


def test_a_chain_broken_after_a_replay_fault_is_reported_as_the_broken_chain(tmp_path: Path) -> None:
    """The audit checks the chain and replays in one pass; the chain is still checked to its end after a replay fault,
    and a broken chain is the verdict, as when the whole chain was checked first."""
    from studio.domain.audit import audit  # noqa: PLC0415

    store = MemoryEventStore()
    sim = simulation(store, START, table_id="T1")
    shoe = sim.deal_shoe(seeded_shoe(8, random.Random(3)))
    next(shoe), next(shoe)
    last = sim.service.state.last_result
    assert last is not None
    fake = e.RoundCompleted(2, "T1-x", last.player, last.banker, 9, 0, Winner.PLAYER, True, False, False, False)
    kind, data, raw = encode(fake)
    forged = store.last_seq("T1") + 1
    store.append("T1", [NewRecord(START, "dealer:mallory", kind, data, raw)], forged - 1)
    store.append("T1", [NewRecord(START, "dealer:mallory", "Note", {"n": n}, None) for n in range(3)], forged)
    records = list(store.read("T1"))
    verdict = audit(records)
    assert (verdict.ok, verdict.first_bad_seq, verdict.records) == (False, forged, forged - 1)
    assert "no round in play" in verdict.reason
    edited = dataclasses.replace(records[-2], actor="dealer:eve")
    verdict = audit([*records[:-2], edited, records[-1]])
    assert (verdict.ok, verdict.first_bad_seq, verdict.records) == (False, edited.seq, edited.seq - 1)
    assert verdict.rounds == 0
    assert verdict.reason.startswith("hash chain broken: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["log", "verify", "{missing}"], "no such database file"),
        (["log", "show", "{db}", "--table", "T9"], "no table 'T9'"),
        (["log", "show", "{db}", "--round", "T1-nope"], "no round 'T1-nope'"),
        (["simulate", "--seed", "1", "--decks", "0"], "not 0"),
    ],
)
def test_log_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    db = logged_table(tmp_path) if "{db}" in argv else tmp_path / "x.db"
    assert main([a.format(db=db, missing=tmp_path / "missing.db") for a in argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_log_verify_shows_a_progress_bar_only_on_a_terminal_and_erases_it(monkeypatch: pytest.MonkeyPatch) -> None:
    records = list(range(3000))
    pipe = io.StringIO()
    assert list(log_command.progress(iter(records), 3000, "T1", pipe)) == records  # type: ignore[arg-type]
    assert pipe.getvalue() == ""
    monkeypatch.setattr(log_command, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(log_command, "PROGRESS_EVERY", 0.0)
    terminal = _Terminal()
    assert list(log_command.progress(iter(records), 3000, "T1", terminal)) == records  # type: ignore[arg-type]
    shown = terminal.getvalue()
    assert "\rT1 [" in shown and "1,024/3,000 records" in shown and "2,048/3,000" in shown
    assert shown.endswith("\r\x1b[K")
    quick = _Terminal()  # under a second: no bar at all
    monkeypatch.setattr(log_command, "PROGRESS_AFTER", 60.0)
    assert list(log_command.progress(iter(records), 3000, "T1", quick)) == records  # type: ignore[arg-type]
    assert quick.getvalue() == ""


def _forge_result(db: Path) -> None:
    """Log, through the store (the chain intact), a result that the recorded cards do not give."""
    with SqlEventStore(f"sqlite:///{db}") as store:
        fake = e.RoundCompleted(99, "T1-x", (), (), 9, 0, Winner.PLAYER, True, False, False, False)
        kind, data, raw = encode(fake)
        seq = store.last_seq("T1")
        store.append("T1", [NewRecord(START, "dealer:mallory", kind, data, raw)], seq)
        store.append("T1", [NewRecord(START, "dealer:mallory", "Note", {"n": 1}, None)], seq + 1)


TAMPERINGS: dict[str, list[str]] = {
    "intact": [],
    "a result edited": [
        """UPDATE event_log SET data = replace(data, '"winner":"banker"', '"winner":"player"')
                           WHERE seq = (SELECT min(seq) FROM event_log WHERE data LIKE '%"winner":"banker"%')"""
    ],
    "a record deleted": ["DELETE FROM event_log WHERE seq = 40"],
    "the log cut short": ["DELETE FROM event_log WHERE seq > 300"],
    "the same data spaced out": ["""UPDATE event_log SET data = replace(data, ',', ', ') WHERE seq = 41"""],
    "a row made unreadable": ["""UPDATE event_log SET data = '{"card": ' WHERE seq = 41"""],
    "a record edited after a forged result": [  # once _forge_result has logged it
        "UPDATE event_log SET actor = 'dealer:eve' WHERE seq = (SELECT max(seq) FROM event_log)"
    ],
}


@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_log_verify_gives_the_one_pass_audits_verdict_with_the_chain_checked_in_a_second_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tampering: str
) -> None:
    """`studio log verify` checks a long log's chain in a second process while it replays (studio/log_audit.py);
    its verdict must be the one-pass `audit`'s, record for record and reason for reason, and a row too damaged to
    read the same one-line error, whichever way it runs."""
    from studio import log_audit  # noqa: PLC0415
    from studio.domain.audit import audit  # noqa: PLC0415

    db = logged_table(tmp_path)
    if tampering == "a record edited after a forged result":
        _forge_result(db)
        TAMPERINGS[tampering] = [
            "UPDATE event_log SET actor = 'dealer:eve' WHERE seq = (SELECT max(seq) FROM event_log)"
        ]
    with sqlite3.connect(db) as connection:
        for statement in TAMPERINGS[tampering]:
            assert connection.execute(statement).rowcount >= 1
    connection.close()
    with SqlEventStore(f"sqlite:///{db}") as store:
        try:
            verdict = audit(store.read("T1"))
            expected = (0 if verdict.ok else 3, f"table T1: {verdict.reason}" if verdict.ok else
                        f"table T1: first bad record seq {verdict.first_bad_seq}: {verdict.reason}")  # fmt: skip
        except StoreError as error:
            expected = (1, str(error))
    exits = {"intact": 0, "the log cut short": 0, "the same data spaced out": 0, "a row made unreadable": 1}
    assert expected[0] == exits.get(tampering, 3)  # the cases are what they say
    for parallel_from in (0, 10**9):  # the chain in a second process; in this one, after the replay
        monkeypatch.setattr(log_audit, "PARALLEL_FROM", parallel_from)
        assert (main(["log", "verify", str(db)]), parallel_from) == (expected[0], parallel_from)
        out, err = capsys.readouterr()
        shown = err.strip() if expected[0] == 1 else out.strip()
        assert expected[1] in shown and len(shown.splitlines()) == 1, (parallel_from, shown)
