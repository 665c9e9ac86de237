"""Player as banker (issue 14, point 2; seed 001): credit points (a balance on each wallet, and the points each ledger
entry adds to it), a bank released at the end of the round its disconnected holder approved, and the record of what
happened to a bank or a player (taken, left, timed out, disconnected) and who did it (insert only).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

BIG = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    # Points count from this revision on: entries and wallets written before it hold none.
    with op.batch_alter_table("wallet") as table:
        table.add_column(sa.Column("points", BIG, nullable=False, server_default="0"))
    with op.batch_alter_table("ledger_entry") as table:
        table.add_column(sa.Column("points", BIG, nullable=False, server_default="0"))
    with op.batch_alter_table("banker_seat") as table:
        table.add_column(sa.Column("release_after", sa.String(), nullable=True))
    op.create_table("player_event",
                    sa.Column("id", BIG, nullable=False), sa.Column("player_id", sa.String(), nullable=False),
                    sa.Column("table_id", sa.String(), nullable=True), sa.Column("kind", sa.String(), nullable=False),
                    sa.Column("game_id", sa.String(), nullable=True), sa.Column("detail", sa.String(), nullable=False),
                    sa.Column("actor", sa.String(), nullable=False), sa.Column("at", sa.String(), nullable=False),
                    sa.PrimaryKeyConstraint("id"))  # fmt: skip
    op.create_index("ix_player_event_player_id", "player_event", ["player_id"])


def downgrade() -> None:
    raise RuntimeError(
        "credit points and the record of banks and disconnects are history: a migration never drops them"
    )
