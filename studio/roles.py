"""The roles of the people and machines that act on the studio. Each account has exactly one."""

from __future__ import annotations

import enum


class Role(enum.Enum):
    DEALER = "dealer"
    PIT_BOSS = "pit_boss"
    SURVEILLANCE = "surveillance"
    ADMIN = "admin"
    GAME_SERVER = "game_server"  # machine clients, with API keys
