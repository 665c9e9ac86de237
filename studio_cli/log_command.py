"""`studio log`: verify, show and export a table's log from the studio database. `verify` and `head` cover the access
log too (its stream, `_access`, is hash-chained like a table's); `show` and `export` are for tables."""

from __future__ import annotations

import argparse
import csv
import functools
import json
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from studio.access import ACCESS_STREAM
from studio.domain.chain import Head, UnreadableRecord, canonical_json, head_problem, verify_stored_chain
from studio.domain.errors import StudioError
from studio.domain.log_views import CSV_COLUMNS, as_row, describe, round_records, shoe_records
from studio.domain.records import Record
from studio.settings import sqlite_url
from studio_cli.arguments import cli_actor, database_of

if TYPE_CHECKING:
    from studio.store_sql import SqlEventStore

EXIT_TAMPERED = 3

EPILOG = """\
DB is the studio's SQLite file (data/studio.db by default) or a database URL.

examples:
  studio log verify data/studio.db
  studio log head data/studio.db --json
  studio log verify data/studio.db --expect-head T1:812:<hash> --witness feed-messages.jsonl
  studio log show data/studio.db --round T1-20261129-155432-0042
  studio log export data/studio.db --shoe 3 --format csv --out shoe3.csv"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "log", help="verify, show and export the event log", description="Verify, show and export the event log.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    verify = actions.add_parser("verify", help="check the hash chain and replay every event, confirming each result")
    verify.add_argument("db", metavar="DB", nargs="?", help="default: $STUDIO_DATABASE_URL, else data/studio.db")
    verify.add_argument("--table", help="only this table (default: every table in the log)")
    verify.add_argument(
        "--expect-head",
        action="append",
        default=[],
        metavar="TABLE:SEQ:HASH",
        type=_head,
        help="a head kept elsewhere: the log must reach SEQ with HASH there (repeatable)",
    )
    verify.add_argument(
        "--witness",
        type=Path,
        metavar="FILE",
        action="append",
        default=[],
        help="feed messages (their log_head) or heads, one per line, each checked against the log",
    )
    verify.add_argument(
        "--checkpoints",
        type=Path,
        metavar="FILE",
        help="a file of signed checkpoints (checkpoints.jsonl): each one's signature and head checked",
    )
    verify.add_argument(
        "--public-key", type=Path, metavar="KEY", help="the public key the checkpoints were signed with"
    )
    verify.set_defaults(run=run_verify)
    head = actions.add_parser("head", help="print each table's last seq and hash (TABLE:SEQ:HASH), to keep elsewhere")
    head.add_argument("db", metavar="DB", nargs="?", help="default: $STUDIO_DATABASE_URL, else data/studio.db")
    head.add_argument("--table", help="only this table")
    head.add_argument("--json", action="store_true", help='[{"table": ..., "seq": ..., "hash": ...}]')
    head.set_defaults(run=run_head)
    for name, helptext in (("show", "print records as readable lines"), ("export", "write records as JSON or CSV")):
        action = actions.add_parser(name, help=helptext)
        action.add_argument("db", metavar="DB", nargs="?", help="default: $STUDIO_DATABASE_URL, else data/studio.db")
        action.add_argument("--table", help="the table (default: the only one in the log)")
        which = action.add_mutually_exclusive_group()
        which.add_argument("--round", metavar="GAME_ID", help="one round, by the game number players quote")
        which.add_argument("--shoe", type=int, metavar="N", help="one shoe, by number")
        if name == "export":
            action.add_argument("--format", choices=("json", "csv"), default="json")
            action.add_argument("--out", type=Path, metavar="FILE", help="write here instead of standard output")
        action.set_defaults(run=run_show if name == "show" else run_export)


def _open(db: str | None) -> SqlEventStore:
    from studio.store_sql import SqlEventStore  # noqa: PLC0415 - the database library loads only when used

    db = database_of(db)
    if "://" not in db and not Path(db).is_file():
        raise StudioError(f"{db}: no such database file")
    return SqlEventStore(sqlite_url(db))


def _head(text: str) -> Head:
    try:
        return Head.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


PROGRESS_AFTER = 1.0  # seconds of a stream's check before its progress bar appears
PROGRESS_EVERY = 0.2  # seconds between redraws
PROGRESS_WIDTH = 30


Item = TypeVar("Item")


def progress(records: Iterable[Item], total: int, label: str, out: TextIO | None = None) -> Iterator[Item]:
    """`records`, passed through, with a progress bar on `out` (standard error) once a check has run for a second, and
    only when `out` is a terminal: a pipe or a log file gets nothing. The bar is erased at the end."""
    out = out or sys.stderr
    if not out.isatty():
        yield from records
        return
    started = time.monotonic()
    redraw = started + PROGRESS_AFTER
    shown = False
    for count, record in enumerate(records, 1):
        yield record
        if count % 1024 == 0 and time.monotonic() >= redraw:
            now = time.monotonic()
            redraw = now + PROGRESS_EVERY
            done = min(count / total, 1.0) if total else 1.0
            filled = round(done * PROGRESS_WIDTH)
            bar = "#" * filled + "-" * (PROGRESS_WIDTH - filled)
            rate = count / (now - started)
            out.write(f"\r{label} [{bar}] {done:4.0%} {count:,}/{total:,} records, {rate:,.0f}/s ")
            out.flush()
            shown = True
    if shown:
        out.write("\r\x1b[K")  # erase the bar: the verdict line follows on standard output
        out.flush()


def run_verify(args: argparse.Namespace) -> int:
    heads = [*args.expect_head, *(head for path in args.witness for head in witness_heads(path))]
    if (args.checkpoints is None) != (args.public_key is None):
        raise StudioError("--checkpoints and --public-key go together: the file, and the key that signed it")
    forged = 0
    if args.checkpoints is not None:
        signed, forged = checkpoint_heads(args.checkpoints, args.public_key)
        heads += signed
    from studio.log_audit import audit_stream, unreadable  # noqa: PLC0415 - the database library loads only when used

    with _open(args.db) as store:
        streams = [args.table] if args.table else store.streams()
        if not streams:
            raise StudioError(f"{args.db}: the log is empty")
        bad = 0
        for stream in streams:
            if stream == ACCESS_STREAM:  # not a table: its hash chain is checked, there is no game to replay
                total = store.last_seq(stream)
                try:
                    chain = verify_stored_chain(progress(store.stored_rows(stream, 0, total), total, stream))
                except UnreadableRecord as damaged:
                    raise unreadable(store, stream, damaged) from None
                if chain.ok:
                    print(f"OK        access log {stream}: {chain.records} records, hash chain intact")
                else:
                    bad += 1
                    print(f"TAMPERED  access log {stream}: first bad record seq {chain.first_bad_seq}: {chain.reason}")
                continue
            verdict = audit_stream(store, stream, watch=functools.partial(progress, label=stream))
            if verdict.ok:
                print(f"OK        table {stream}: {verdict.reason}")
            else:
                bad += 1
                print(f"TAMPERED  table {stream}: first bad record seq {verdict.first_bad_seq}: {verdict.reason}")
        for head in heads:
            if args.table and head.stream != args.table:
                continue
            problem = head_problem(head, _record_at(store, head.stream, head.seq))
            if problem is None:
                print(f"OK        head {head}")
            else:
                bad += 1
                print(f"TAMPERED  {problem}")
    return EXIT_TAMPERED if bad or forged else 0


def checkpoint_heads(path: Path, public_key_file: Path) -> tuple[list[Head], int]:
    """The heads of the checkpoints in `path` whose signature verifies with the key; and how many do not (each
    printed)."""
    from studio.domain.checkpoints import Checkpoint  # noqa: PLC0415 - the crypto library loads only when used
    from studio.signing import load_public_key, verify  # noqa: PLC0415

    key = load_public_key(public_key_file)
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise StudioError(f"{path}: cannot read the checkpoints: {error}") from None
    heads, forged = [], 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            checkpoint = Checkpoint.from_line(line)
        except ValueError as error:
            forged += 1
            print(f"TAMPERED  checkpoint line {number}: {error}")
            continue
        if not verify(checkpoint, key):
            forged += 1
            print(
                f"TAMPERED  checkpoint line {number} ({checkpoint.head}): its signature does not verify with this key"
            )
            continue
        heads.append(checkpoint.head)
    return heads, forged


def _record_at(store: SqlEventStore, stream: str, seq: int) -> Record | None:
    return next((record for record in store.read(stream, after=seq - 1) if record.seq == seq), None)


def witness_heads(path: Path) -> list[Head]:
    """The heads a witness file holds: feed messages (a JSON object per line, a JSON array, or the feed's
    {"messages": [...]} page) give their `log_head`; any other line is a head, TABLE:SEQ:HASH."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise StudioError(f"{path}: cannot read the witness file: {error}") from None
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        whole = whole.get("messages", [whole])
    items: list[Any] = whole if isinstance(whole, list) else [line for line in text.splitlines() if line.strip()]
    heads = []
    for number, entry in enumerate(items, start=1):
        try:
            item = json.loads(entry) if isinstance(entry, str) and entry.lstrip().startswith("{") else entry
            if isinstance(item, str):
                heads.append(Head.parse(item))
            elif isinstance(item, dict) and isinstance(item.get("log_head"), dict):  # other messages witness nothing
                head = item["log_head"]
                heads.append(Head.parse(f"{item['table']}:{int(head['seq'])}:{head['hash']}"))
        except (ValueError, KeyError, TypeError) as error:
            raise StudioError(f"{path}: item {number} is neither a feed message nor a head: {error}") from None
    return heads


def run_head(args: argparse.Namespace) -> int:
    with _open(args.db) as store:
        streams = [args.table] if args.table else store.streams()
        heads = []
        for stream in streams:
            seq = store.last_seq(stream)
            if seq == 0:
                raise StudioError(f"no table {stream!r} in the log")
            record = _record_at(store, stream, seq)
            assert record is not None
            heads.append(Head(stream, seq, record.hash))
    if args.json:
        print(json.dumps([{"table": h.stream, "seq": h.seq, "hash": h.hash} for h in heads]))
    else:
        for head in heads:
            print(head)
    return 0


def _select(store: SqlEventStore, args: argparse.Namespace) -> list[Record]:
    streams = [stream for stream in store.streams() if stream != ACCESS_STREAM]  # the tables
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


def _log_export(store: SqlEventStore, args: argparse.Namespace, records: list[Record]) -> None:
    """An export from the command line goes on the access log too, before it is written, naming the system user."""
    from studio.access import RECORDS_EXPORTED, AccessLog  # noqa: PLC0415 - loads only when used
    from studio.clock import SystemClock  # noqa: PLC0415

    what, ident = ("round", args.round) if args.round else ("shoe", str(args.shoe)) if args.shoe is not None else (
        "table", "")  # fmt: skip
    table = records[0].stream if records else (args.table or "")
    fields = {"what": what, "id": ident, "table": table, "format": args.format, "records": len(records)}
    AccessLog(store, SystemClock()).record(RECORDS_EXPORTED, cli_actor(), None, **fields)


def run_show(args: argparse.Namespace) -> int:
    with _open(args.db) as store:
        for record in _select(store, args):
            print(describe(record))
    return 0


def run_export(args: argparse.Namespace) -> int:
    with _open(args.db) as store:
        records = _select(store, args)
        rows = [as_row(record, canonical_json(dict(record.data))) for record in records]
        _log_export(store, args, records)
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
