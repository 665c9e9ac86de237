"""Who acts on the studio: the roles of the people and machines, and the `Actor` every command names.

Each account has exactly one role. The log names an actor as "role:name" (`dealer:alice`, `pit_boss:bob`,
`device:shoe-1`, `system:sim`); in code an actor is an `Actor`, read from that text once, so that the procedure asks
"is this a pit boss?" of a value rather than of a string.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Role(enum.Enum):
    DEALER = "dealer"
    PIT_BOSS = "pit_boss"
    SURVEILLANCE = "surveillance"
    ADMIN = "admin"
    GAME_SERVER = "game_server"  # machine clients, with API keys


class Machine(enum.Enum):
    """Actors that are not accounts."""

    DEVICE = "device"  # a card source, named by its id
    SYSTEM = "system"  # the studio itself: the simulator, the auto-dealer, a roster


_KINDS: dict[str, Role | Machine] = {kind.value: kind for kind in (*Role, *Machine)}


@dataclass(frozen=True, slots=True)
class Actor:
    kind: Role | Machine
    name: str

    @classmethod
    def parse(cls, text: str, bare: Role | Machine | None = None) -> Actor:
        """Read "role:name" (or, given `bare`, a name alone as one of that kind); `ValueError` naming what was
        expected if it is neither."""
        if bare is not None and ":" not in text and text.strip():
            return cls(bare, text)
        kind, separator, name = text.partition(":")
        if not separator or not name.strip() or kind not in _KINDS:
            raise ValueError(f"an actor is written role:name with role one of {', '.join(_KINDS)}, not {text!r}")
        return cls(_KINDS[kind], name)

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.name}"
