"""The exception tree of the studio package.

Every error a user can cause derives from `StudioError` and carries a one-line message that names what is wrong, so
the command line, the console and the log can show it as it is. Structured fields ride along for the UI.
"""

from __future__ import annotations


class StudioError(Exception):
    """Base of every error the studio raises on purpose."""


class InvalidCardCode(StudioError, ValueError):
    """A card code could not be read."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"invalid card code {text!r}: {reason}")


class InvalidShoe(StudioError, ValueError):
    """A shoe description is impossible (negative decks, more copies removed than the shoe holds, ...)."""


class ConfigError(StudioError, ValueError):
    """A configuration file or value is malformed or incomplete.

    The message stays on one line: a line break or other control character quoted from the file (a key, a value, a
    path) is shown escaped, as Python writes it in a string.
    """

    def __init__(self, message: str) -> None:
        super().__init__("".join(char if char.isprintable() else repr(char)[1:-1] for char in message))


class BetRejected(StudioError, ValueError):
    """A bet breaks the table's limits or is of a type the pay table does not offer."""

    def __init__(self, bet_type: str, stake: int, reason: str) -> None:
        self.bet_type = bet_type
        self.stake = stake
        self.reason = reason
        # A refusal of no stake in particular (the banker's approval, a seat, the round) is its reason alone.
        super().__init__(f"{bet_type} bet of {stake} rejected: {reason}" if stake else reason)


class InvalidDeal(StudioError, ValueError):
    """A sequence of cards that the rules of baccarat cannot produce (wrong order, a card too many, unfinished)."""


class ProcedureError(StudioError):
    """A command the procedure does not allow now. Nothing was changed or logged.

    `phase` is the table's phase, `command` the refused command's name, `expected` what the phase accepts.
    """

    def __init__(self, phase: str, command: str, reason: str, expected: tuple[str, ...] = ()) -> None:
        self.phase = phase
        self.command = command
        self.reason = reason
        self.expected = expected
        hint = f" (expected: {', '.join(expected)})" if expected else ""
        super().__init__(f"{command} refused in phase {phase}: {reason}{hint}")
