"""Betting rules of the seeds (issue 14, point 4): the stake each bet asked for (beside the stake the table accepted,
raised to the minimum or cut to the maximum), players' PINs (scrypt hashes only) and their own maximum stakes (insert
only: each change is kept).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

BIG = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("bet") as table:
        table.add_column(sa.Column("requested", BIG, nullable=True))  # None on bets placed before this revision
    op.create_table("player_pin",
                    sa.Column("player_id", sa.String(), nullable=False),
                    sa.Column("pin_hash", sa.String(), nullable=False),
                    sa.Column("set_at", sa.String(), nullable=False), sa.PrimaryKeyConstraint("player_id"))  # fmt: skip
    op.create_table("own_maximum",
                    sa.Column("id", BIG, nullable=False), sa.Column("player_id", sa.String(), nullable=False),
                    sa.Column("max_stake", BIG, nullable=True), sa.Column("at", sa.String(), nullable=False),
                    sa.PrimaryKeyConstraint("id"))  # fmt: skip
    op.create_index("ix_own_maximum_player_id", "own_maximum", ["player_id"])


def downgrade() -> None:
    raise RuntimeError("own maximums are a record of what players asked for: a migration never removes them")
