"""Argument types shared by the commands: a bad value is refused by argparse with one line saying what is expected."""

from __future__ import annotations

import argparse
import getpass
import os
from pathlib import Path

from studio.domain.errors import StudioError


def port(value: str) -> int:
    """A TCP port to listen on: 1 to 65535."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a port is a whole number from 1 to 65535, not {value!r}") from None
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a whole number from 1 to 65535, not {number}")
    return number


DATABASE_ENV = "STUDIO_DATABASE_URL"
REDIS_ENV = "STUDIO_REDIS_URL"
ACCESS_ENV = "STUDIO_ACCESS_CONFIG"


def from_environment(name: str, default: str | None = None) -> str | None:
    """A setting kept off the command line (where `ps` shows it to every user): the environment variable `name`, else
    the first line of the file that `name`_FILE names (a file only the service can read), else `default`."""
    value = os.environ.get(name)
    if value:
        return value
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise StudioError(f"{name}_FILE: cannot read {path}: {error.strerror or error}") from None
        if not lines or not lines[0].strip():
            raise StudioError(f"{name}_FILE: {path} is empty")
        return lines[0].strip()
    return default


def database_of(given: str | None) -> str:
    """The database: `--database` when given, else STUDIO_DATABASE_URL (or the file STUDIO_DATABASE_URL_FILE names),
    else the embedded default, data/studio.db."""
    return given or from_environment(DATABASE_ENV) or "data/studio.db"


def hide_password(url: str) -> str:
    """A URL as it may be logged: any password replaced by ***."""
    scheme, separator, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not separator or not at or ":" not in credentials:
        return url
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}"


def cli_actor() -> str:
    """Who acts from the command line, for the access log: the operating-system user."""
    try:
        return f"system:cli-{getpass.getuser()}"
    except (KeyError, OSError):
        return "system:cli"
