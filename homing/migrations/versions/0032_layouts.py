"""Email layouts: ``layouts`` (a tenant's shared frames of its email templates, by key)
and ``layout_versions`` (their numbered, localised versions: draft, published or
retired), the same columns as ``templates`` and ``template_versions``.

Revision ID: 0032
Revises: 0031
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "layouts",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("default_locale", sa.String(35), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("tenant_id", "key", name="uq_layouts_tenant_key"),
    )
    op.create_index("ix_layouts_tenant_id", "layouts", ["tenant_id", "id"])
    op.create_table(
        "layout_versions",
        sa.Column("id", ID, primary_key=True),
        sa.Column("layout_id", ID, sa.ForeignKey("layouts.id", ondelete="CASCADE"), nullable=False),
        sa.Column("tenant_id", ID, nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("locale", sa.String(35), nullable=False),
        sa.Column("state", sa.String(10), nullable=False),
        sa.Column("parts", sa.JSON, nullable=False),
        sa.Column("variables", sa.JSON),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("published_at", UTCDateTime),
        sa.UniqueConstraint("layout_id", "number", name="uq_layout_versions_number"),
    )
    op.create_index("ix_layout_versions_state", "layout_versions", ["layout_id", "state", "locale"])


def downgrade() -> None:
    op.drop_index("ix_layout_versions_state", "layout_versions")
    op.drop_table("layout_versions")
    op.drop_index("ix_layouts_tenant_id", "layouts")
    op.drop_table("layouts")
