"""The in-app feed: ``feed_items`` (each recipient's items), ``feed_secrets`` (the
sealed HMAC key of a tenant's feed tokens) and ``feed_origins`` (the browser origins a
tenant allows). Categories gain an ``in_app`` default, on for transactional ones.

Revision ID: 0028
Revises: 0027
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "feed_items",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column(
            "recipient_id",
            ID,
            sa.ForeignKey("recipients.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("job_id", ID, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("url", sa.String(2048)),
        sa.Column("category", sa.String(64)),
        sa.Column("data", sa.JSON),
        sa.Column("seen_at", UTCDateTime),
        sa.Column("read_at", UTCDateTime),
        sa.Column("archived_at", UTCDateTime),
        sa.UniqueConstraint("tenant_id", "recipient_id", "seq", name="uq_feed_items_seq"),
    )
    op.create_index(
        "ix_feed_items_unread",
        "feed_items",
        ["tenant_id", "recipient_id", "read_at", "archived_at"],
    )
    op.create_table(
        "feed_secrets",
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), primary_key=True),
        sa.Column("secret_sealed", sa.Text, nullable=False),
        sa.Column("preview", sa.String(40), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
    )
    op.create_table(
        "feed_origins",
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("origin", sa.String(255), nullable=False),
        sa.PrimaryKeyConstraint("origin", "tenant_id", name="pk_feed_origins"),
    )
    _in_app_defaults()


def _in_app_defaults() -> None:
    """A category made before the feed has no ``in_app`` default: give it its kind's
    (on for transactional, off for marketing), as a new category gets."""
    categories = sa.table(
        "categories",
        sa.column("tenant_id", ID),
        sa.column("key", sa.String(64)),
        sa.column("kind", sa.String(20)),
        sa.column("defaults", sa.JSON),
    )
    conn = op.get_bind()
    rows = conn.execute(sa.select(categories)).all()
    for row in rows:
        defaults = dict(row.defaults or {})
        if "in_app" in defaults:
            continue
        defaults["in_app"] = row.kind == "transactional"
        conn.execute(
            categories.update()
            .where(categories.c.tenant_id == row.tenant_id, categories.c.key == row.key)
            .values(defaults=defaults)
        )


def downgrade() -> None:
    op.drop_table("feed_origins")
    op.drop_table("feed_secrets")
    op.drop_index("ix_feed_items_unread", "feed_items")
    op.drop_table("feed_items")
