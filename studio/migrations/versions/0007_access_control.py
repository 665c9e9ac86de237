"""Staff access (issue 18): failed sign-ins and API keys counted per account and per address, the locks they cause,
and a session's start and last activity (its length and idle timeout by role). The access log itself is a stream of
`event_log` and needs no table.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

BIG = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table("access_failure",
                    sa.Column("id", BIG, nullable=False), sa.Column("subject", sa.String(), nullable=False),
                    sa.Column("at", sa.String(), nullable=False), sa.PrimaryKeyConstraint("id"))  # fmt: skip
    op.create_index("ix_access_failure_subject", "access_failure", ["subject"])
    op.create_table("access_lock",
                    sa.Column("subject", sa.String(), nullable=False), sa.Column("until", sa.String(), nullable=False),
                    sa.Column("at", sa.String(), nullable=False), sa.PrimaryKeyConstraint("subject"))  # fmt: skip
    # Sessions opened before this revision have neither: they end at their `expires_at`, idle or not.
    with op.batch_alter_table("user_session") as table:
        table.add_column(sa.Column("started_at", sa.String(), nullable=True))
        table.add_column(sa.Column("last_seen", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("user_session") as table:
        table.drop_column("last_seen")
        table.drop_column("started_at")
    op.drop_table("access_lock")
    op.drop_index("ix_access_failure_subject", "access_failure")
    op.drop_table("access_failure")
