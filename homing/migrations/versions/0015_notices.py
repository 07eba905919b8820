"""Notices to tenants and the platform's own email: tenants' contact address and
operations URL, a provider account's rejected credentials, the notices sent (once per
event) and the operator alerts firing.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import UTCDateTime

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tenant_settings", sa.Column("contact_email", sa.String(254)))
    op.add_column("tenant_settings", sa.Column("operations_url", sa.Text))
    op.add_column("provider_accounts", sa.Column("credentials_rejected_at", UTCDateTime))
    op.create_table(
        "notices",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("tenant_id", sa.String(36), sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("kind", sa.String(60), nullable=False),
        sa.Column("event_key", sa.String(200), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("held", sa.Boolean, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("tenant_id", "kind", "event_key", name="uq_notices_event"),
    )
    op.create_index("ix_notices_tenant_created", "notices", ["tenant_id", "created_at"])
    op.create_table(
        "alerts_firing",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("since", UTCDateTime, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
    )
    # The windows the alerts look back over (homing.store.alert_signals).
    op.create_index("ix_attempts_started_at", "attempts", ["started_at"])
    op.create_index("ix_dead_letters_created_at", "dead_letters", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_dead_letters_created_at", "dead_letters")
    op.drop_index("ix_attempts_started_at", "attempts")
    op.drop_table("alerts_firing")
    op.drop_index("ix_notices_tenant_created", "notices")
    op.drop_table("notices")
    op.drop_column("provider_accounts", "credentials_rejected_at")
    op.drop_column("tenant_settings", "operations_url")
    op.drop_column("tenant_settings", "contact_email")
