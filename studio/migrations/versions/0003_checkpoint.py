"""Signed checkpoints of the tables' heads (studio/signing.py), kept beside the log; insert only.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BIG = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table("checkpoint",
                    sa.Column("id", BIG, nullable=False), sa.Column("table_id", sa.String(), nullable=False),
                    sa.Column("seq", BIG, nullable=False), sa.Column("line", sa.String(), nullable=False),
                    sa.PrimaryKeyConstraint("id"))  # fmt: skip
    op.create_index("ix_checkpoint_table_id", "checkpoint", ["table_id"])


def downgrade() -> None:
    raise RuntimeError("checkpoints are records of the log's history: a migration never removes them")
