"""Invitations remember whether their link went by mail: ``invitations.mailed``.

A link mailed to the invited address is the proof that its holder reads that mailbox;
a link shown to the inviter is not, and cannot make a new account on its own.

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "invitations",
        sa.Column("mailed", sa.Boolean, nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    op.drop_column("invitations", "mailed")
