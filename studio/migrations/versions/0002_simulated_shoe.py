"""The simulated shoe's order, so that a restarted studio deals on from where the shoe was (studio/simulated_shoes.py).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

BIG = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table("simulated_shoe",
                    sa.Column("table_id", sa.String(), nullable=False), sa.Column("shoe", BIG, nullable=False),
                    sa.Column("cards", sa.String(), nullable=False), sa.PrimaryKeyConstraint("table_id"))  # fmt: skip


def downgrade() -> None:
    op.drop_table("simulated_shoe")  # only the simulator's convenience: no record of play is lost
