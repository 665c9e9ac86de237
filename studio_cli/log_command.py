"""`studio log`: verify, show and export a table's log from the studio database."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studio.domain.audit import audit
from studio.domain.chain import canonical_json
from studio.domain.errors import StudioError
from studio.domain.log_views import CSV_COLUMNS, as_row, describe, round_records, shoe_records
from studio.domain.records import Record
from studio.settings import sqlite_url

if TYPE_CHECKING:
    from studio.store_sql import SqlEventStore

EXIT_TAMPERED = 3

EPILOG = """\
DB is the studio's SQLite file (data/studio.db by default) or a database URL.

examples:
  studio log verify data/studio.db
  studio log show data/studio.db --round T1-20261129-155432-0042
  studio log export data/studio.db --shoe 3 --format csv --out shoe3.csv"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "log", help="verify, show and export the event log", description="Verify, show and export the event log.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    verify = actions.add_parser("verify", help="check the hash chain and replay every event, confirming each result")
    verify.add_argument("db", metavar="DB")
    verify.add_argument("--table", help="only this table (default: every table in the log)")
    verify.set_defaults(run=run_verify)
    for name, helptext in (("show", "print records as readable lines"), ("export", "write records as JSON or CSV")):
        action = actions.add_parser(name, help=helptext)
        action.add_argument("db", metavar="DB")
        action.add_argument("--table", help="the table (default: the only one in the log)")
        which = action.add_mutually_exclusive_group()
        which.add_argument("--round", metavar="GAME_ID", help="one round, by the game number players quote")
        which.add_argument("--shoe", type=int, metavar="N", help="one shoe, by number")
        if name == "export":
            action.add_argument("--format", choices=("json", "csv"), default="json")
            action.add_argument("--out", type=Path, metavar="FILE", help="write here instead of standard output")
        action.set_defaults(run=run_show if name == "show" else run_export)


def _open(db: str) -> SqlEventStore:
    from studio.store_sql import SqlEventStore  # noqa: PLC0415 - the database library loads only when used

    if "://" not in db and not Path(db).is_file():
        raise StudioError(f"{db}: no such database file")
    return SqlEventStore(sqlite_url(db))


def run_verify(args: argparse.Namespace) -> int:
    with _open(args.db) as store:
        streams = [args.table] if args.table else store.streams()
        if not streams:
            raise StudioError(f"{args.db}: the log is empty")
        bad = 0
        for stream in streams:
            verdict = audit(store.read(stream))
            if verdict.ok:
                print(f"OK        table {stream}: {verdict.reason}")
            else:
                bad += 1
                print(f"TAMPERED  table {stream}: first bad record seq {verdict.first_bad_seq}: {verdict.reason}")
    return EXIT_TAMPERED if bad else 0


def _select(store: SqlEventStore, args: argparse.Namespace) -> list[Record]:
    streams = store.streams()
    table = args.table
    if table is None:
        if len(streams) != 1:
            raise StudioError(f"name the table with --table (the log holds: {', '.join(streams) or 'nothing'})")
        table = streams[0]
    elif table not in streams:
        raise StudioError(f"no table {table!r} in the log (it holds: {', '.join(streams) or 'nothing'})")
    records = store.read(table)
    if args.round:
        selected = round_records(records, args.round)
        if not selected:
            raise StudioError(f"no round {args.round!r} at table {table}")
        return selected
    if args.shoe is not None:
        selected = shoe_records(records, args.shoe)
        if not selected:
            raise StudioError(f"no shoe {args.shoe} at table {table}")
        return selected
    return list(records)


def run_show(args: argparse.Namespace) -> int:
    with _open(args.db) as store:
        for record in _select(store, args):
            print(describe(record))
    return 0


def run_export(args: argparse.Namespace) -> int:
    with _open(args.db) as store:
        rows = [as_row(record, canonical_json(dict(record.data))) for record in _select(store, args)]
    out = args.out.open("w", encoding="utf-8", newline="") if args.out else sys.stdout
    try:
        if args.format == "csv":
            writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        else:
            for row in rows:
                row["data"] = json.loads(row["data"])
            json.dump(rows, out, indent=2)
            out.write("\n")
    finally:
        if args.out:
            out.close()
    return 0
