"""A staff member's display name: what players are shown (the dealer on the results feed), never the account name.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("user_account") as table:
        table.add_column(sa.Column("display_name", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("user_account") as table:
        table.drop_column("display_name")
