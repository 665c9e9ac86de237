"""The studio database's schema is kept by Alembic migrations, the same on SQLite and PostgreSQL (studio/schema.py)."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect
from sqlalchemy.engine import make_url
from sqlmodel import SQLModel

from studio import chat_store, signing, simulated_shoes, store_sql, users, wallets
from studio.clock import ManualClock
from studio.database import open_engine
from studio.domain.records import NewRecord
from studio.schema import alembic_config, current_revision, head_revision, upgrade
from studio.store_sql import SqlEventStore
from studio.wallets import WalletStore
from studio_cli.main import main

MODULES = (
    chat_store,
    signing,
    simulated_shoes,
    store_sql,
    users,
    wallets,
)  # the modules that declare the studio's tables
T0 = datetime(2026, 11, 29, 12, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'studio.db'}"
    return str(request.getfixturevalue("postgres_url"))


def engine_for(url: str) -> Engine:
    return open_engine(make_url(url))


def test_the_migrations_build_exactly_the_tables_the_stores_declare(url: str) -> None:
    engine = engine_for(url)
    upgrade(engine)
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), SQLModel.metadata)
    engine.dispose()
    assert differences == []  # a model changed without a migration, or the reverse, shows here
    assert len(SQLModel.metadata.tables) == 19


def test_a_new_database_is_at_the_newest_revision_and_upgrading_again_changes_nothing(url: str) -> None:
    engine = engine_for(url)
    assert current_revision(engine) is None
    upgrade(engine)
    upgrade(engine)
    assert current_revision(engine) == head_revision() == "0007"
    engine.dispose()


def test_a_database_made_before_migrations_is_adopted_with_its_records(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as old:  # the event log exactly as the store made it before migrations
        old.execute(
            "CREATE TABLE event_log (stream VARCHAR NOT NULL, seq INTEGER NOT NULL, at VARCHAR NOT NULL, actor VARCHAR "
            "NOT NULL, kind VARCHAR NOT NULL, data TEXT NOT NULL, raw TEXT, prev_hash VARCHAR NOT NULL, hash VARCHAR "
            "NOT NULL, PRIMARY KEY (stream, seq))"
        )
    with SqlEventStore(f"sqlite:///{path}") as store:
        store.append("T1", [NewRecord(T0, "dealer:ann", "DealerChanged", {"dealer": "ann"})], 0)
    engine = engine_for(f"sqlite:///{path}")
    upgrade(engine)
    assert current_revision(engine) == "0007"
    assert {"event_log", "wallet", "ledger_entry", "bet", "user_account"} <= set(inspect(engine).get_table_names())
    engine.dispose()
    with SqlEventStore(f"sqlite:///{path}") as store:
        assert [record.kind for record in store.read("T1")] == ["DealerChanged"]


def test_tables_starting_together_on_one_postgresql_database_migrate_it_once(postgres_url: str) -> None:
    engines = [engine_for(postgres_url) for _ in range(4)]
    errors: list[BaseException] = []

    def run(engine: Engine) -> None:
        try:
            upgrade(engine)
        except BaseException as error:  # collected for the assertion below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(engine,)) for engine in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert current_revision(engines[0]) == "0007"
    for engine in engines:
        engine.dispose()


def test_amounts_and_seqs_have_64_bits_on_postgresql_too(postgres_url: str) -> None:
    wallets_store = WalletStore(postgres_url, ManualClock(T0))
    large = 10**14  # a trillion in cents: far past PostgreSQL's 32-bit INTEGER
    wallets_store.deposit("p1", "gs", large)
    wallets_store.deposit("p1", "gs", large)
    assert wallets_store.balance("p1") == wallets_store.ledger_sum("p1") == 2 * large
    wallets_store.close()
    with SqlEventStore(postgres_url) as store:
        store.append("T1", [NewRecord(T0, "dealer:ann", "DealerChanged", {"dealer": "ann"})], 0)
        assert list(store.read("T1", after=2**40)) == []  # a seq past 32 bits is a fine question


def test_studio_db_upgrade_and_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = str(tmp_path / "cli.db")
    assert main(["db", "status", "--database", database]) == 2  # not migrated yet
    assert main(["db", "upgrade", "--database", database]) == 0
    assert main(["db", "status", "--database", database]) == 0
    out = capsys.readouterr().out
    assert "none" in out and "database at revision 0007 (newest)" in out


def test_studio_db_upgrade_on_an_unreachable_server_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "upgrade", "--database", "postgresql+psycopg://studio@127.0.0.1:1/none"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("studio: error: database") and "refused" in err and len(err.splitlines()) == 1


def test_a_database_at_the_first_revision_upgrades_with_its_records(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'first.db'}"
    engine = engine_for(url)
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    assert current_revision(engine) == "0001" and "simulated_shoe" not in inspect(engine).get_table_names()
    with SqlEventStore(url) as store:  # opening the store brings the database to the newest revision
        store.append("T1", [NewRecord(T0, "dealer:ann", "DealerChanged", {"dealer": "ann"})], 0)
    assert current_revision(engine) == "0007" and {"simulated_shoe", "checkpoint"} <= set(
        inspect(engine).get_table_names()
    )
    engine.dispose()


def test_wallets_and_ledgers_made_before_credit_points_upgrade_with_none(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'points.db'}"
    engine = engine_for(url)
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0005")
        connection.exec_driver_sql("INSERT INTO wallet (player_id, game_server, balance) VALUES ('p1', 'gs', 700)")
        connection.exec_driver_sql("INSERT INTO ledger_entry (player_id, kind, amount, at) VALUES "
                                   "('p1', 'deposit', 700, '2026-11-29T12:00:00+00:00')")  # fmt: skip
    wallets_store = WalletStore(url, ManualClock(T0))  # opening the store brings the database to the newest revision
    assert current_revision(engine) == "0007"
    assert wallets_store.balance("p1") == 700 and wallets_store.points("p1") == 0 == wallets_store.points_sum("p1")
    assert wallets_store.banker("T1") is None and wallets_store.events("p1") == []
    wallets_store.close()
    engine.dispose()
