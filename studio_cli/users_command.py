"""`studio users`: accounts for people (password or PIN, hashed) and API keys for game servers."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import TYPE_CHECKING, Any

from studio.clock import SystemClock
from studio.domain.errors import StudioError
from studio.domain.roles import Role
from studio.settings import sqlite_url

if TYPE_CHECKING:
    from studio.users import UserStore

PEOPLE = [role.value for role in Role if role is not Role.GAME_SERVER]


def register(commands: Any) -> None:
    parser = commands.add_parser("users", help="create accounts and API keys", description="Accounts and API keys.")
    parser.add_argument("--database", default="data/studio.db", help="SQLite file or database URL")
    after = argparse.ArgumentParser(add_help=False)  # --database is also accepted after the action
    after.add_argument("--database", default=argparse.SUPPRESS, help="SQLite file or database URL")
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    add = actions.add_parser("add", parents=[after],
                             help="add a person: asks for the password (or reads STUDIO_PASSWORD)")  # fmt: skip
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=PEOPLE)
    add.add_argument("--display-name", help="what players are shown (a dealer on the results feed), e.g. 'Anna'")
    add.set_defaults(run=run_add)
    shown = actions.add_parser("display-name", parents=[after],
                               help="set what players are shown for a person (never the account name)")  # fmt: skip
    shown.add_argument("name")
    shown.add_argument("display_name", metavar="DISPLAY_NAME")
    shown.set_defaults(run=run_display_name)
    key = actions.add_parser("add-key", parents=[after], help="add an API key for a game server (printed once)")
    key.add_argument("name")
    key.set_defaults(run=run_add_key)
    listing = actions.add_parser("list", parents=[after], help="list the accounts")
    listing.set_defaults(run=run_list)


def _store(args: argparse.Namespace) -> UserStore:
    from studio.users import UserStore  # noqa: PLC0415 - the database library loads only when used

    return UserStore(sqlite_url(args.database), SystemClock())


def _ask_password(name: str) -> str:
    """The password from STUDIO_PASSWORD, or asked twice at the terminal; a clear error without a terminal."""
    given = os.environ.get("STUDIO_PASSWORD")
    if given:
        return given
    if not sys.stdin.isatty():
        raise StudioError(f"no terminal to ask the password of {name} on: set STUDIO_PASSWORD; nothing was created")
    try:
        password = getpass.getpass(f"password or PIN for {name}: ")
        again = getpass.getpass("again: ")
    except EOFError:
        raise StudioError("no password was entered; nothing was created") from None
    if again != password:
        raise StudioError("the two entries differ; nothing was created")
    return password


def run_add(args: argparse.Namespace) -> int:
    password = _ask_password(args.name)
    users = _store(args)
    try:
        principal = users.add_user(args.name, Role(args.role), password, args.display_name)
    finally:
        users.close()
    print(f"added {principal.name} ({principal.role.value})")
    return 0


def run_display_name(args: argparse.Namespace) -> int:
    users = _store(args)
    try:
        shown = users.set_display_name(args.name, args.display_name)
    finally:
        users.close()
    print(f"{args.name} is shown to players as {shown!r}")
    return 0


def run_add_key(args: argparse.Namespace) -> int:
    users = _store(args)
    try:
        key = users.add_api_key(args.name)
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
