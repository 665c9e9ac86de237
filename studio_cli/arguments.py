"""Argument types shared by the commands: a bad value is refused by argparse with one line saying what is expected."""

from __future__ import annotations

import argparse


def port(value: str) -> int:
    """A TCP port to listen on: 1 to 65535."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a port is a whole number from 1 to 65535, not {value!r}") from None
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a whole number from 1 to 65535, not {number}")
    return number
