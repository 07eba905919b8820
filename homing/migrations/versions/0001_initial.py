"""Tenants, keys, provider accounts, jobs, the queue, attempts and dead letters.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ID = sa.String(36)


def upgrade() -> None:
    op.create_table(
        "tenants",
        sa.Column("id", ID, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("plan", sa.String(20), nullable=False),
        sa.Column("suspended", sa.Boolean, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False, index=True),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(20), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("test", sa.Boolean, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("last_used_at", UTCDateTime),
        sa.Column("revoked_at", UTCDateTime),
    )
    op.create_table(
        "provider_accounts",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("channel", sa.String(20), nullable=False),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("credentials_sealed", sa.Text, nullable=False),
        sa.Column("credentials_preview", sa.String(200), nullable=False),
        sa.Column("config", sa.JSON, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("deleted_at", UTCDateTime),
    )
    op.create_index(
        "ix_provider_accounts_tenant_channel",
        "provider_accounts",
        ["tenant_id", "channel", "priority"],
    )
    _create_jobs()
    _create_queue_and_outcomes()


def _create_jobs() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("channel", sa.String(20), nullable=False),
        sa.Column("queue", sa.String(40), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("delivery", sa.String(20), nullable=False),
        sa.Column("provider_pin", sa.String(100)),
        sa.Column("fallback_pin", sa.String(100)),
        sa.Column("idempotency_key", sa.String(255)),
        sa.Column("request_hash", sa.String(64)),
        sa.Column("attempts_made", sa.Integer, nullable=False),
        sa.Column("skipped_providers", sa.JSON, nullable=False),
        sa.Column("provider", sa.String(40)),
        sa.Column("provider_message_id", sa.String(255)),
        sa.Column("error", sa.Text),
        sa.Column("error_class", sa.String(40)),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("completed_at", UTCDateTime),
        sa.UniqueConstraint("tenant_id", "idempotency_key", name="uq_jobs_tenant_idempotency_key"),
    )
    op.create_index("ix_jobs_tenant_created", "jobs", ["tenant_id", "id"])
    op.create_index("ix_jobs_tenant_status", "jobs", ["tenant_id", "status", "id"])


def _create_queue_and_outcomes() -> None:
    op.create_table(
        "queue_entries",
        sa.Column("job_id", ID, sa.ForeignKey("jobs.id"), primary_key=True),
        sa.Column("tenant_id", ID, nullable=False),
        sa.Column("queue", sa.String(40), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("available_at", sa.Float, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("deferred_seconds", sa.Float, nullable=False),
        sa.Column("claim_token", sa.String(36)),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index(
        "ix_queue_entries_claim", "queue_entries", ["queue", "priority", "available_at"]
    )
    op.create_table(
        "attempts",
        sa.Column("id", ID, primary_key=True),
        sa.Column("job_id", ID, sa.ForeignKey("jobs.id"), nullable=False, index=True),
        sa.Column("tenant_id", ID, nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("provider_account_id", ID),
        sa.Column("provider", sa.String(40), nullable=False),
        sa.Column("outcome", sa.String(30), nullable=False),
        sa.Column("status_code", sa.Integer),
        sa.Column("error", sa.Text),
        sa.Column("started_at", UTCDateTime, nullable=False),
        sa.Column("duration_ms", sa.Integer, nullable=False),
    )
    op.create_table(
        "dead_letters",
        sa.Column("id", ID, primary_key=True),
        sa.Column("job_id", ID, sa.ForeignKey("jobs.id"), nullable=False, index=True),
        sa.Column("tenant_id", ID, nullable=False, index=True),
        sa.Column("queue", sa.String(40), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("error", sa.Text, nullable=False),
        sa.Column("error_class", sa.String(40), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("redriven_at", UTCDateTime),
    )


def downgrade() -> None:
    for table in ("dead_letters", "attempts", "queue_entries", "jobs"):
        op.drop_table(table)
    for table in ("provider_accounts", "api_keys", "tenants"):
        op.drop_table(table)
