"""What the log proves (README): every attack on a logged table is caught by `studio log verify`, given what the
chain alone, a head kept elsewhere (`studio log head`, `--expect-head`) or a game server's witness (the `log_head` of
the feed's results and voids, `--witness`) shows. Each attack is made on a real SQLite file, as someone with write
access to it would make it."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dealer_ui.feed_log import LogFeed
from studio.domain.chain import Head, head_problem, record_hash
from studio.simulation import seeded_shoe, simulation
from studio.store_sql import SqlEventStore
from studio_cli.main import main

START = datetime(2026, 11, 29, 15, 54, 32, tzinfo=UTC)
TAMPERED = 3


def logged_table(tmp_path: Path) -> tuple[Path, list[dict[str, object]]]:
    """A shoe dealt into a SQLite log, and the feed messages a game server received for it."""
    db = tmp_path / "studio.db"
    store = SqlEventStore(f"sqlite:///{db}")
    sim = simulation(store, START, table_id="T1")
    for _ in sim.deal_shoe(seeded_shoe(8, random.Random(3))):
        pass
    messages, _ = LogFeed(store).backlog("T1", 0, store.last_seq("T1"), 10_000)
    store.close()
    return db, messages


def head_of(db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["log", "head", str(db)]) == 0
    return capsys.readouterr().out.strip()


def rows(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute("SELECT stream, seq, at, actor, kind, data, raw, prev_hash, hash FROM event_log "
                                  "ORDER BY seq").fetchall()  # fmt: skip


def rehash_from(db: Path, seq: int) -> None:
    """Re-seal every record from `seq` on, as an attacker who knows the chain's rules would after changing one."""
    prev_hash = next(row[8] for row in rows(db) if row[1] == seq - 1)
    with sqlite3.connect(db) as connection:
        for stream, number, at, actor, kind, data, raw, _, _ in [row for row in rows(db) if int(row[1]) >= seq]:
            digest = record_hash(str(stream), int(number), datetime.fromisoformat(str(at)), str(actor), str(kind),
                                 json.loads(str(data)), raw if raw is None else str(raw), str(prev_hash))  # fmt: skip
            connection.execute(
                "UPDATE event_log SET prev_hash = ?, hash = ? WHERE seq = ?", (prev_hash, digest, number)
            )
            prev_hash = digest


def last_result_seq(db: Path) -> int:
    return max(int(row[1]) for row in rows(db) if row[4] == "RoundCompleted")


def edit(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE event_log SET actor = 'dealer:mallory' WHERE seq = 20")


def delete(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM event_log WHERE seq = 20")


def swap(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE event_log SET seq = -1 WHERE seq = 20")
        connection.execute("UPDATE event_log SET seq = 20 WHERE seq = 21")
        connection.execute("UPDATE event_log SET seq = 21 WHERE seq = -1")


def forge(db: Path) -> None:
    """A result added at the end, sealed by the chain's rules: the chain holds, but the replay refuses it."""
    last = rows(db)[-1]
    result = next(row for row in reversed(rows(db)) if row[4] == "RoundCompleted")
    data = json.loads(str(result[5])) | {"round": 999, "game_id": "T1-forged"}
    at = datetime.fromisoformat(str(last[2]))
    seq = int(str(last[1])) + 1
    digest = record_hash("T1", seq, at, "dealer:mallory", "RoundCompleted", data, None, str(last[8]))
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO event_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           ("T1", seq, last[2], "dealer:mallory", "RoundCompleted", json.dumps(data), None, last[8],
                            digest))  # fmt: skip


def truncate(db: Path) -> None:
    """The last rounds cut off the end: what is left is a valid chain."""
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM event_log WHERE seq > ?", (last_result_seq(db) - 40,))


def rewrite(db: Path) -> None:
    """An early result's winner changed, and every record after it re-hashed: a valid chain, and it replays."""
    with sqlite3.connect(db) as connection:
        seq, data = connection.execute("SELECT seq, data FROM event_log WHERE kind = 'BettingOpened' ORDER BY seq "
                                       "LIMIT 1 OFFSET 3").fetchone()  # fmt: skip
        opened = json.loads(data)
        opened["closes_at"] = opened["opened_at"]  # the round's betting window, shortened after the fact
        connection.execute("UPDATE event_log SET data = ? WHERE seq = ?", (json.dumps(opened), seq))
    rehash_from(db, seq)


ATTACKS: dict[str, Callable[[Path], None]] = {
    "edit": edit, "delete": delete, "swap": swap, "forge": forge, "truncate": truncate, "rewrite": rewrite,
}  # fmt: skip
CHAIN_ALONE_MISSES = {"truncate", "rewrite"}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_is_caught_given_a_head_kept_elsewhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], attack: str
) -> None:
    db, _ = logged_table(tmp_path)
    head = head_of(db, capsys)
    assert main(["log", "verify", str(db), "--expect-head", head]) == 0
    capsys.readouterr()
    ATTACKS[attack](db)
    # The chain and the replay alone: caught, except the two attacks that leave a valid chain behind.
    assert main(["log", "verify", str(db)]) == (0 if attack in CHAIN_ALONE_MISSES else TAMPERED)
    capsys.readouterr()
    assert main(["log", "verify", str(db), "--expect-head", head]) == TAMPERED
    assert "TAMPERED" in capsys.readouterr().out


@pytest.mark.parametrize("attack", sorted(CHAIN_ALONE_MISSES))
def test_a_game_servers_witness_catches_a_truncation_or_a_rewrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], attack: str
) -> None:
    db, messages = logged_table(tmp_path)
    witness = tmp_path / "feed.jsonl"
    witness.write_text("".join(json.dumps(message) + "\n" for message in messages))
    results = [m for m in messages if m["type"] in ("result", "void")]
    assert results and all("log_head" in m for m in results)
    assert main(["log", "verify", str(db), "--witness", str(witness)]) == 0
    assert capsys.readouterr().out.count("OK        head") == len(results)
    ATTACKS[attack](db)
    assert main(["log", "verify", str(db), "--witness", str(witness)]) == TAMPERED
    out = capsys.readouterr().out
    assert ("does not reach seq" if attack == "truncate" else "rewritten?") in out


def test_heads_in_both_forms_and_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, messages = logged_table(tmp_path)
    assert main(["log", "head", str(db), "--json"]) == 0
    [head] = json.loads(capsys.readouterr().out)
    last = rows(db)[-1]
    assert head == {"table": "T1", "seq": last[1], "hash": last[8]}
    witness = tmp_path / "heads.txt"
    witness.write_text(f"T1:{head['seq']}:{head['hash']}\n\n")  # a head per line, blank lines allowed
    assert main(["log", "verify", str(db), "--witness", str(witness)]) == 0
    page = tmp_path / "page.json"  # a page of the REST feed, as a game server saved it
    page.write_text(json.dumps({"messages": messages}))
    assert main(["log", "verify", str(db), "--witness", str(page)]) == 0
    assert capsys.readouterr().out.count("OK        head") == 1 + sum(m["type"] in ("result", "void") for m in messages)
    assert Head.parse(f"T1:5:{'a' * 64}") == Head("T1", 5, "a" * 64)
    assert str(Head("T:1", 5, "b" * 64)) == f"T:1:5:{'b' * 64}" and Head.parse(f"T:1:5:{'b' * 64}").stream == "T:1"


@pytest.mark.parametrize("text", ["T1", "T1:0:" + "a" * 64, "T1:x:" + "a" * 64, "T1:3:abc", ":3:" + "a" * 64])
def test_a_bad_head_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> None:
    db, _ = logged_table(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["log", "verify", str(db), "--expect-head", text])
    assert exited.value.code == 2 and "argument --expect-head:" in capsys.readouterr().err


def test_head_problem_names_what_is_wrong() -> None:
    head = Head("T1", 7, "c" * 64)
    assert head_problem(head, None) == "table T1: the log does not reach seq 7 (cut short?)"
