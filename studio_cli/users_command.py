"""`studio users`: accounts for people (password or PIN, hashed) and API keys for game servers."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from studio.clock import SystemClock
from studio.domain.errors import StudioError
from studio.domain.roles import Role
from studio.settings import sqlite_url
from studio_cli.arguments import ACCESS_ENV, cli_actor, database_of, from_environment

if TYPE_CHECKING:
    from studio.users import UserStore

PEOPLE = [role.value for role in Role if role is not Role.GAME_SERVER]


def register(commands: Any) -> None:
    parser = commands.add_parser("users", help="create accounts and API keys", description="Accounts and API keys.")
    database_help = "SQLite file or database URL (default: $STUDIO_DATABASE_URL, else data/studio.db)"
    parser.add_argument("--database", help=database_help)
    after = argparse.ArgumentParser(add_help=False)  # --database is also accepted after the action
    after.add_argument("--database", default=argparse.SUPPRESS, help=database_help)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    add = actions.add_parser("add", parents=[after],
                             help="add a person: asks for the password (or reads STUDIO_PASSWORD)")  # fmt: skip
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=PEOPLE)
    add.add_argument("--display-name", help="what players are shown (a dealer on the results feed), e.g. 'Anna'")
    add.add_argument("--demo", action="store_true",
                     help="an account of a demo studio: a password shorter than 10 characters is accepted")  # fmt: skip
    add.set_defaults(run=run_add)
    unlock = actions.add_parser("unlock", parents=[after],
                                help="end an account's lockout (or, with --address, a client address's)")  # fmt: skip
    unlock.add_argument("name", nargs="?")
    unlock.add_argument("--address", help="a client address locked for failed sign-ins or API keys")
    unlock.set_defaults(run=run_unlock)
    shown = actions.add_parser("display-name", parents=[after],
                               help="set what players are shown for a person (never the account name)")  # fmt: skip
    shown.add_argument("name")
    shown.add_argument("display_name", metavar="DISPLAY_NAME")
    shown.set_defaults(run=run_display_name)
    key = actions.add_parser("add-key", parents=[after], help="add an API key for a game server (printed once)")
    key.add_argument("name")
    key.set_defaults(run=run_add_key)
    revoke = actions.add_parser("revoke-key", parents=[after], help="remove every API key of a game server")
    revoke.add_argument("name")
    revoke.set_defaults(run=run_revoke_key)
    listing = actions.add_parser("list", parents=[after], help="list the accounts")
    listing.set_defaults(run=run_list)


def _store(args: argparse.Namespace) -> UserStore:
    from studio.access import load_access_policy  # noqa: PLC0415
    from studio.users import UserStore  # noqa: PLC0415 - the database library loads only when used

    access_file = from_environment(ACCESS_ENV)
    policy = load_access_policy(Path(access_file) if access_file else None)
    return UserStore(sqlite_url(database_of(args.database)), SystemClock(), policy)


def _by() -> str:
    return cli_actor()


def _ask_password(name: str) -> str:
    """The password from STUDIO_PASSWORD, or asked twice at the terminal; a clear error without a terminal."""
    given = os.environ.get("STUDIO_PASSWORD")
    if given:
        return given
    if not sys.stdin.isatty():
        raise StudioError(f"no terminal to ask the password of {name} on: set STUDIO_PASSWORD; nothing was created")
    try:
        password = getpass.getpass(f"password for {name}: ")
        again = getpass.getpass("again: ")
    except EOFError:
        raise StudioError("no password was entered; nothing was created") from None
    if again != password:
        raise StudioError("the two entries differ; nothing was created")
    return password


def run_add(args: argparse.Namespace) -> int:
    users = _store(args)
    try:
        minimum = 4 if args.demo else users.policy.min_password  # 10 unless the access policy says otherwise
        password = _ask_password(args.name)
        if len(password) < minimum:
            raise StudioError(f"the password of {args.name} has {len(password)} characters; at least {minimum} "
                              "are needed (--demo: a demo studio's may be shorter); nothing was created")  # fmt: skip
        principal = users.add_user(args.name, Role(args.role), password, args.display_name, min_length=minimum,
                                   by=_by())  # fmt: skip
    finally:
        users.close()
    print(f"added {principal.name} ({principal.role.value})")
    return 0


def run_display_name(args: argparse.Namespace) -> int:
    users = _store(args)
    try:
        shown = users.set_display_name(args.name, args.display_name, by=_by())
    finally:
        users.close()
    print(f"{args.name} is shown to players as {shown!r}")
    return 0


def run_add_key(args: argparse.Namespace) -> int:
    users = _store(args)
    try:
        key = users.add_api_key(args.name, by=_by())
    finally:
        users.close()
    print(f"API key for {args.name} (shown once; send it as the X-API-Key header):\n{key}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    users = _store(args)
    try:
        for principal in users.users():
            shown = users.display_name(principal.name)
            print(f"{principal.name:<24} {principal.role.value:<12} {'shown as ' + shown if shown else ''}".rstrip())
        for name, created in users.api_keys():
            print(f"{name:<24} game_server (API key made {created})")
    finally:
        users.close()
    return 0


def run_unlock(args: argparse.Namespace) -> int:
    if (args.name is None) == (args.address is None):
        raise StudioError("name the account to unlock, or give --address (one of them)")
    users = _store(args)
    try:
        was_locked = users.unlock(args.name, address=args.address, by=_by())
    finally:
        users.close()
    what = args.name if args.name is not None else f"address {args.address}"
    # The same words whether or not an account has this name: the command says only what the lock table held.
    print(f"{what}: unlocked" if was_locked else f"{what}: was not locked (its failed attempts are forgotten)")
    return 0


def run_revoke_key(args: argparse.Namespace) -> int:
    users = _store(args)
    try:
        count = users.revoke_api_keys(args.name, by=_by())
    finally:
        users.close()
    if count == 0:
        raise StudioError(f"no API key named {args.name!r}; nothing was revoked")
    print(f"revoked {count} API key{'s' if count > 1 else ''} of {args.name}")
    return 0
