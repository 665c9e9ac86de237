"""The initial schema: the event log, wallets and ledger, bets and settlements, the player bank, accounts and chat.

Revision ID: 0001
Revises: (none)

Databases made before the studio used migrations already hold some of these tables (made by the stores as they
opened them): this revision creates only the tables that are missing, so such a database is adopted as it is.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TEXT = sa.String()  # the stores' str columns: VARCHAR with no length, the same in SQLite and PostgreSQL
BIG = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # seqs, ids, amounts: 64 bits (studio/database.py)


def _column(name: str, kind: sa.types.TypeEngine[Any] = TEXT, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, kind, nullable=nullable)


def _create(existing: set[str], name: str, *parts: sa.schema.SchemaItem, indexes: dict[str, list[str]]) -> None:
    if name in existing:
        return
    op.create_table(name, *parts)
    for index, columns in indexes.items():
        op.create_index(index, name, columns)


def upgrade() -> None:
    existing = set(sa.inspect(op.get_bind()).get_table_names())
    _create(existing, "event_log",
            _column("stream"), _column("seq", BIG), _column("at"), _column("actor"), _column("kind"),
            _column("data", sa.Text()), _column("raw", sa.Text(), nullable=True), _column("prev_hash"),
            _column("hash"), sa.PrimaryKeyConstraint("stream", "seq"), indexes={})  # fmt: skip
    _create(existing, "wallet",
            _column("player_id"), _column("game_server"), _column("balance", BIG),
            sa.PrimaryKeyConstraint("player_id"), indexes={})  # fmt: skip
    _create(existing, "ledger_entry",
            _column("id", BIG), _column("player_id"), _column("kind"), _column("amount", BIG),
            _column("game_id", nullable=True), _column("bet_id", nullable=True), _column("at"),
            sa.PrimaryKeyConstraint("id"),
            indexes={"ix_ledger_entry_game_id": ["game_id"], "ix_ledger_entry_player_id": ["player_id"]})  # fmt: skip
    _create(existing, "bet",
            _column("bet_id"), _column("game_server"), _column("player_id"), _column("table_id"), _column("game_id"),
            _column("bet_type"), _column("stake", BIG), _column("status"),
            _column("verdict", nullable=True), _column("returned", BIG, nullable=True),
            _column("commission", BIG, nullable=True), _column("placed_at"),
            _column("placed_order", BIG), _column("settled_at", nullable=True),
            sa.PrimaryKeyConstraint("bet_id"),
            indexes={"bet_player_game": ["player_id", "game_id"], "ix_bet_game_id": ["game_id"],
                     "ix_bet_placed_order": ["placed_order"], "ix_bet_player_id": ["player_id"]})  # fmt: skip
    _create(existing, "settled_round",
            _column("game_id"), _column("outcome"), _column("at"), sa.PrimaryKeyConstraint("game_id"),
            indexes={})  # fmt: skip
    _create(existing, "banker_seat",
            _column("table_id"), _column("player_id"), _column("game_server"), _column("auto_approve", sa.Boolean()),
            _column("since"), sa.PrimaryKeyConstraint("table_id"), indexes={})  # fmt: skip
    _create(existing, "banker_approval",
            _column("game_id"), _column("player_id"), _column("at"), sa.PrimaryKeyConstraint("game_id"),
            indexes={})  # fmt: skip
    _create(existing, "user_account",
            _column("name"), _column("role"), _column("password_hash"), _column("created_at"),
            _column("disabled", sa.Boolean()), sa.PrimaryKeyConstraint("name"), indexes={})  # fmt: skip
    _create(existing, "user_session",
            _column("token_hash"), _column("name"), _column("role"), _column("expires_at"),
            sa.PrimaryKeyConstraint("token_hash"), indexes={"ix_user_session_name": ["name"]})  # fmt: skip
    _create(existing, "api_key",
            _column("key_hash"), _column("name"), _column("created_at"), sa.PrimaryKeyConstraint("key_hash"),
            indexes={"ix_api_key_name": ["name"]})  # fmt: skip
    _create(existing, "chat_message",
            _column("id", BIG), _column("table_id"), _column("player_id"), _column("nickname"),
            _column("game_server"), _column("received"), _column("shown"), _column("at"),
            sa.PrimaryKeyConstraint("id"), indexes={"ix_chat_message_table_id": ["table_id"]})  # fmt: skip
    _create(existing, "chat_mute",
            _column("player_id"), _column("muted_by"), _column("reason"), _column("at"),
            sa.PrimaryKeyConstraint("player_id"), indexes={})  # fmt: skip


def downgrade() -> None:
    # Refused on purpose: going below the initial schema would drop the log and the ledger.
    raise RuntimeError("the initial schema is never removed by a migration: the studio's records are kept")
