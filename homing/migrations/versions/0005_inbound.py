"""Inbound events: the journal, conflicts, inbound secrets, suppressions, sending domains.

Revision ID: 0005
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import UTCDateTime

revision = "0005"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.String(36)


def _journal() -> None:
    op.create_table(
        "inbound_events",
        sa.Column("id", ID, primary_key=True),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("provider_account_id", sa.String(36), nullable=False),
        sa.Column("event_id", sa.String(255), nullable=False),
        sa.Column("tenant_id", ID),
        sa.Column("body_hash", sa.String(64), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("vendor_type", sa.String(100)),
        sa.Column("event_type", sa.String(20)),
        sa.Column("job_id", ID),
        sa.Column("recipient", sa.String(320)),
        sa.Column("payload", sa.JSON),
        sa.Column("raw", sa.Text),
        sa.Column("detail", sa.JSON),
        sa.Column("error", sa.Text),
        sa.Column("occurred_at", UTCDateTime),
        sa.Column("received_at", UTCDateTime, nullable=False),
        sa.Column("processed_at", UTCDateTime),
        sa.UniqueConstraint(
            "source", "provider_account_id", "event_id", name="uq_inbound_events_source_event"
        ),
    )
    op.create_index("ix_inbound_events_job", "inbound_events", ["job_id"])
    op.create_index("ix_inbound_events_received", "inbound_events", ["received_at"])
    op.create_index(
        "ix_inbound_events_tenant_received", "inbound_events", ["tenant_id", "received_at"]
    )
    op.create_index("ix_inbound_events_status", "inbound_events", ["status"])
    op.create_table(
        "inbound_conflicts",
        sa.Column("id", ID, primary_key=True),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("provider_account_id", sa.String(36), nullable=False),
        sa.Column("event_id", sa.String(255), nullable=False),
        sa.Column("tenant_id", ID),
        sa.Column("original_hash", sa.String(64), nullable=False),
        sa.Column("body_hash", sa.String(64), nullable=False),
        sa.Column("payload", sa.JSON),
        sa.Column("raw", sa.Text),
        sa.Column("received_at", UTCDateTime, nullable=False),
    )
    op.create_index(
        "ix_inbound_conflicts_event",
        "inbound_conflicts",
        ["source", "provider_account_id", "event_id"],
    )


def _deliverability() -> None:
    op.create_table(
        "provider_inbound",
        sa.Column(
            "provider_account_id", ID, sa.ForeignKey("provider_accounts.id"), primary_key=True
        ),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("kind", sa.String(30), nullable=False),
        sa.Column("secret_sealed", sa.Text, nullable=False),
        sa.Column("preview", sa.String(200), nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "suppressions",
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), primary_key=True),
        sa.Column("channel", sa.String(20), primary_key=True),
        sa.Column("address", sa.String(320), primary_key=True),
        sa.Column("reason", sa.String(30), nullable=False),
        sa.Column("source", sa.String(40), nullable=False),
        sa.Column("event_entry_id", ID),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "sending_domains",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("provider_account_id", ID, sa.ForeignKey("provider_accounts.id"), nullable=False),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("domain", sa.String(253), nullable=False),
        sa.Column("provider_domain_id", sa.String(255), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("records", sa.JSON, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("verified_at", UTCDateTime),
        sa.UniqueConstraint(
            "tenant_id",
            "provider_account_id",
            "domain",
            name="uq_sending_domains_account_domain",
        ),
    )
    op.create_index("ix_sending_domains_tenant_domain", "sending_domains", ["tenant_id", "domain"])


def upgrade() -> None:
    op.create_index(
        "ix_jobs_tenant_provider_message_id", "jobs", ["tenant_id", "provider_message_id"]
    )
    _journal()
    _deliverability()


def downgrade() -> None:
    for table in (
        "sending_domains",
        "suppressions",
        "provider_inbound",
        "inbound_conflicts",
        "inbound_events",
    ):
        op.drop_table(table)
    op.drop_index("ix_jobs_tenant_provider_message_id", table_name="jobs")
