"""Inbound signature nonces: Mailgun tokens remembered for the tolerance window.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "inbound_nonces",
        sa.Column("provider_account_id", sa.String(36), primary_key=True),
        sa.Column("nonce", sa.String(64), primary_key=True),
        sa.Column("expires_at", UTCDateTime, nullable=False),
    )
    op.create_index("ix_inbound_nonces_expires_at", "inbound_nonces", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_inbound_nonces_expires_at", table_name="inbound_nonces")
    op.drop_table("inbound_nonces")
