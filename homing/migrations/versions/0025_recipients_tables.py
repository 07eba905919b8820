"""Recipients, categories and preferences (issue #26, first slice).

``recipients``: the people a tenant sends to, by its ``external_id``, with an address
per channel; ``recipient_counts``: how many each tenant has (the bound is checked
against it); ``categories``: a tenant's kinds of notification and their defaults by
channel; ``recipient_preferences``: a recipient's choice per category and channel.
``jobs`` gains the recipient (its row id) and category a job was sent to, indexed for
frequency caps.

Revision ID: 0025
Revises: 0024
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "recipients",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("external_id", sa.String(255), nullable=False),
        sa.Column("email", sa.String(400)),
        sa.Column("phone", sa.String(20)),
        sa.Column("telegram_chat_id", sa.String(100)),
        sa.Column("slack_channel", sa.String(100)),
        sa.Column("locale", sa.String(35)),
        sa.Column("timezone", sa.String(64)),
        sa.Column("data", sa.JSON),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("tenant_id", "external_id", name="uq_recipients_tenant_external_id"),
    )
    op.create_table(
        "recipient_counts",
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), primary_key=True),
        sa.Column("count", sa.Integer, nullable=False),
    )
    op.create_table(
        "categories",
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("defaults", sa.JSON, nullable=False),
        sa.Column("frequency_cap", sa.JSON),
        sa.Column("quiet_hours", sa.JSON),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "key", name="pk_categories"),
    )
    op.create_table(
        "recipient_preferences",
        sa.Column(
            "recipient_id",
            ID,
            sa.ForeignKey("recipients.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("category_key", sa.String(64), nullable=False),
        sa.Column("channel", sa.String(20), nullable=False),
        sa.Column("allowed", sa.Boolean, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint(
            "recipient_id", "category_key", "channel", name="pk_recipient_prefs"
        ),
    )

    op.add_column("jobs", sa.Column("recipient_id", ID))
    op.add_column("jobs", sa.Column("category", sa.String(64)))
    op.create_index(
        "ix_jobs_recipient_category", "jobs", ["recipient_id", "category", "created_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_recipient_category", table_name="jobs")
    op.drop_column("jobs", "category")
    op.drop_column("jobs", "recipient_id")
    op.drop_table("recipient_preferences")
    op.drop_table("categories")
    op.drop_table("recipient_counts")
    op.drop_table("recipients")
