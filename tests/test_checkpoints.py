"""Signed checkpoints (issue 13): the studio signs each table's head with its Ed25519 key at every shoe's end and at
least every N minutes, keeps them in its database and in a file; `studio log verify --checkpoints --public-key`
checks each signature and each head against the log. A truncation or a re-hashed rewrite made after a checkpoint,
without the private key, is caught; so is a forged or altered checkpoint."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dealer_ui.checkpoints import Checkpointer
from dealer_ui.runtime import Studio, StudioSettings
from studio.clock import ManualClock
from studio.domain.chain import Head
from studio.domain.checkpoints import Checkpoint, CheckpointReason
from studio.domain.roles import Actor, Role
from studio.signing import CheckpointStore, Signer, SigningKeyError, generate_keys, load_private_key, load_public_key
from studio.signing import verify as verify_signature
from studio.simulation import seeded_shoe, simulation
from studio.store_sql import SqlEventStore
from studio.table_service import Logged
from studio_cli.main import main
from tests.test_log_heads import rewrite, truncate

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)
DEALER = Actor(Role.DEALER, "ann")


def keys(tmp_path: Path) -> tuple[Path, Path]:
    assert main(["keys", "generate", "--out", str(tmp_path / "keys")]) == 0
    return tmp_path / "keys" / "studio-signing-key.pem", tmp_path / "keys" / "studio-signing-key.pub.pem"


def dealt_shoe(tmp_path: Path) -> tuple[Path, SqlEventStore]:
    """A shoe dealt into a SQLite log: the file, and the store open on it."""
    db = tmp_path / "studio.db"
    store = SqlEventStore(f"sqlite:///{db}")
    sim = simulation(store, T0, table_id="T1")
    for _ in sim.deal_shoe(seeded_shoe(8, random.Random(3))):
        pass
    return db, store


def checkpointed_shoe(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A shoe dealt into a SQLite log, checkpointed at its end as the running studio does; (db, file, public key)."""
    private, public = keys(tmp_path)
    db, store = dealt_shoe(tmp_path)
    file = tmp_path / "checkpoints.jsonl"
    checkpoints = CheckpointStore(f"sqlite:///{db}", file)
    head = list(store.read("T1"))[-1]
    assert head.kind == "ShoeEnded"
    Checkpointer(Signer(load_private_key(private)), checkpoints, ManualClock(T0), 10).take(
        head, CheckpointReason.SHOE_END
    )
    checkpoints.close()
    store.close()
    return db, file, public


def test_keys_are_made_once_and_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    private, public = keys(tmp_path)
    assert "key id:" in capsys.readouterr().out and private.stat().st_mode & 0o777 == 0o600
    signer = Signer(load_private_key(private))
    checkpoint = signer.sign(Head("T1", 5, "a" * 64), T0, CheckpointReason.INTERVAL)
    assert verify_signature(checkpoint, load_public_key(public))
    assert Checkpoint.from_line(checkpoint.to_line()) == checkpoint
    with pytest.raises(SigningKeyError, match="never overwritten"):
        generate_keys(tmp_path / "keys")
    assert main(["keys", "generate", "--out", str(tmp_path / "keys")]) == 1
    assert "never overwritten" in capsys.readouterr().err


def test_a_checkpointed_log_verifies_and_its_truncation_or_rewrite_does_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, file, public = checkpointed_shoe(tmp_path)
    argv = ["log", "verify", str(db), "--checkpoints", str(file), "--public-key", str(public)]
    assert main(argv) == 0
    assert "OK        head T1:" in capsys.readouterr().out
    for attack, said in ((truncate, "does not reach seq"), (rewrite, "rewritten?")):
        copy = tmp_path / f"{attack.__name__}.db"
        copy.write_bytes(db.read_bytes())
        attack(copy)
        assert main(["log", "verify", str(copy)]) == 0  # the chain alone: still valid
        capsys.readouterr()
        assert main([*argv[:2], str(copy), *argv[3:]]) == 3
        assert said in capsys.readouterr().out


def test_a_forged_or_altered_checkpoint_or_another_key_is_caught(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, file, public = checkpointed_shoe(tmp_path)
    line = json.loads(file.read_text())
    altered = tmp_path / "altered.jsonl"
    altered.write_text(json.dumps(line | {"seq": line["seq"] - 5}) + "\n")  # a head moved back, to hide a truncation
    _, other_public = keys(tmp_path / "other")
    for checkpoints, key, said in ((altered, public, "does not verify"), (file, other_public, "does not verify")):
        assert main(["log", "verify", str(db), "--checkpoints", str(checkpoints), "--public-key", str(key)]) == 3
        assert said in capsys.readouterr().out
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n")
    assert main(["log", "verify", str(db), "--checkpoints", str(garbage), "--public-key", str(public)]) == 3
    assert main(["log", "verify", str(db), "--checkpoints", str(file)]) == 1  # no key: one line, exit 1
    assert "go together" in capsys.readouterr().err


def test_a_shoe_end_is_checkpointed_at_once_and_a_growing_log_on_an_interval(tmp_path: Path) -> None:
    private, public = keys(tmp_path)
    db, store = dealt_shoe(tmp_path)
    records = list(store.read("T1"))
    checkpoints = CheckpointStore(f"sqlite:///{db}", tmp_path / "checkpoints.jsonl")
    waits: list[float] = []
    heads = [records[10], records[10], records[20]]  # the log grew, then stood still, then grew again

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) > len(heads):
            raise asyncio.CancelledError

    checkpointer = Checkpointer(Signer(load_private_key(private)), checkpoints, ManualClock(T0), 10, sleep)
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(checkpointer.run(lambda: [heads[len(waits) - 1]]))
    assert waits == [600.0] * 4  # every 10 minutes
    checkpointer.observe("T1", [Logged(None, records[5])])  # type: ignore[arg-type]  # not a shoe's end: nothing
    checkpointer.observe("T1", [Logged(None, records[-1])])  # type: ignore[arg-type]  # the shoe ended: at once
    read = [Checkpoint.from_line(line) for line in checkpoints.lines()]
    assert [(cp.reason.value, cp.head.seq) for cp in read] == [("interval", 11), ("interval", 21),
                                                              ("shoe_end", records[-1].seq)]  # fmt: skip
    assert [line.strip() for line in (tmp_path / "checkpoints.jsonl").read_text().splitlines()] == checkpoints.lines()
    assert all(verify_signature(cp, load_public_key(public)) for cp in read)
    checkpoints.close()
    store.close()


def test_the_studio_signs_with_its_key_or_in_demo_mode_with_one_it_makes(tmp_path: Path) -> None:
    private, _ = keys(tmp_path)
    with_key = Studio(StudioSettings(database=str(tmp_path / "a" / "studio.db"), signing_key=private))
    assert (
        with_key.checkpointer is not None and with_key.checkpointer.store.file == tmp_path / "a" / "checkpoints.jsonl"
    )
    demo = Studio(StudioSettings(database=str(tmp_path / "b" / "studio.db"), demo=True))
    assert demo.checkpointer is not None and (tmp_path / "b" / "studio-signing-key.pem").is_file()
    assert Studio(StudioSettings(database=str(tmp_path / "c" / "studio.db"))).checkpointer is None
