"""`studio db`: the studio database's schema (Alembic migrations, studio/schema.py).

The studio migrates a database itself when it opens it; `studio db upgrade` does it alone, e.g. before starting many
table processes on a new PostgreSQL database, and `studio db status` tells where a database stands.
"""

from __future__ import annotations

import argparse
from typing import Any

from studio.domain.errors import StudioError
from studio.settings import sqlite_url
from studio_cli.arguments import database_of


def register(commands: Any) -> None:
    parser = commands.add_parser("db", help="create or upgrade the database schema", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    database = argparse.ArgumentParser(add_help=False)
    database.add_argument("--database", help="SQLite file or database URL, e.g. postgresql+psycopg://studio@db/studio "
                          "(default: $STUDIO_DATABASE_URL or the file $STUDIO_DATABASE_URL_FILE names, "
                          "else data/studio.db)")  # fmt: skip
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    upgrade = actions.add_parser("upgrade", parents=[database], help="bring the schema to the newest revision")
    upgrade.set_defaults(run=run_upgrade)
    status = actions.add_parser("status", parents=[database], help="the database's revision and the newest one")
    status.set_defaults(run=run_status)


def _engine(args: argparse.Namespace) -> Any:
    from sqlalchemy.engine import make_url  # noqa: PLC0415 - the database libraries load only when used
    from sqlalchemy.exc import SQLAlchemyError  # noqa: PLC0415

    from studio.database import open_engine  # noqa: PLC0415

    try:
        args.database = database_of(args.database)
        return open_engine(make_url(sqlite_url(args.database)))
    except (SQLAlchemyError, ImportError, OSError) as error:
        raise StudioError(f"database {args.database!r}: {error}") from None


def run_upgrade(args: argparse.Namespace) -> int:
    from alembic.util.exc import CommandError  # noqa: PLC0415
    from sqlalchemy.exc import SQLAlchemyError  # noqa: PLC0415

    from studio.schema import current_revision, migrate  # noqa: PLC0415

    engine = _engine(args)
    try:
        migrate(engine)
        print(f"database at revision {current_revision(engine)} (newest)")
    except (SQLAlchemyError, CommandError) as error:
        raise StudioError(f"database {args.database!r}: {str(error).splitlines()[0]}") from None
    finally:
        engine.dispose()
    return 0


def run_status(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import SQLAlchemyError  # noqa: PLC0415

    from studio.schema import current_revision, head_revision  # noqa: PLC0415

    engine = _engine(args)
    try:
        current, newest = current_revision(engine), head_revision()
    except SQLAlchemyError as error:
        raise StudioError(f"database {args.database!r}: {str(error).splitlines()[0]}") from None
    finally:
        engine.dispose()
    print(f"database revision: {current or 'none (empty or made before migrations)'}; newest: {newest}")
    return 0 if current == newest else 2
