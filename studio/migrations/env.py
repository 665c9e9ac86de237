"""Alembic's entry point for the studio database (see studio/schema.py).

The studio runs migrations itself (`studio.schema.migrate`, on the connection it passes in `config.attributes`). For a
developer writing a new migration, the Alembic command line works from the repository root with the database given
as `-x url=...`:

    .venv/bin/alembic -x url=sqlite:///data/studio.db revision --autogenerate -m "what changes"
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection, make_url
from sqlmodel import SQLModel

from studio import chat_store, signing, simulated_shoes, store_sql, users, wallets
from studio.database import WRITE_OPTION, open_engine

# Each module declares its tables on SQLModel's metadata.
TABLES = (chat_store, signing, simulated_shoes, store_sql, users, wallets)


def run(connection: Connection) -> None:
    # render_as_batch: SQLite alters a table by copying it, and Alembic's batch mode does that for us.
    context.configure(connection=connection, target_metadata=SQLModel.metadata, render_as_batch=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is not None:
    run(connection)
else:
    url = context.get_x_argument(as_dictionary=True).get("url") or context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("give the database: alembic -x url=sqlite:///data/studio.db ...")
    engine = open_engine(make_url(url))
    with engine.execution_options(**{WRITE_OPTION: True}).connect() as writer:
        run(writer)
    engine.dispose()
