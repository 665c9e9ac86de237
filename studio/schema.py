"""The studio database's schema, kept by Alembic migrations (studio/migrations/versions/), the same on SQLite and
PostgreSQL.

Every store opens its database through `migrate`, which brings it to the newest revision: a new database is created,
an older one upgraded, an up-to-date one only checked (once per process and database). Migrations run in one
transaction that holds the database's write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock), so tables
starting together on one database migrate it once, one after the other. A migration never deletes records.
"""

from __future__ import annotations

import threading
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

from studio.database import WRITE_OPTION

MIGRATIONS = Path(__file__).parent / "migrations"
ADVISORY_LOCK = 0x5754_4449_4F  # any constant the studio alone uses: PostgreSQL's lock for running migrations

_migrated: set[str] = set()
_lock = threading.Lock()


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def migrate(engine: Engine) -> None:
    """Bring the database behind `engine` to the newest revision, once per process and database (errors:
    SQLAlchemy's, or Alembic's CommandError)."""
    key = engine.url.render_as_string(hide_password=False)
    with _lock:
        if key not in _migrated:
            upgrade(engine)
            _migrated.add(key)


def upgrade(engine: Engine) -> None:
    """Bring the database to the newest revision, in one transaction holding the database's write lock."""
    with engine.execution_options(**{WRITE_OPTION: True}).begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK})
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None: never migrated)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()
