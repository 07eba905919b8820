"""Templates: ``templates`` (a tenant's templates, by key) and ``template_versions``
(their numbered, localised versions: draft, published or retired).

Revision ID: 0026
Revises: 0025
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "templates",
        sa.Column("id", ID, primary_key=True),
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("default_locale", sa.String(35), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.UniqueConstraint("tenant_id", "key", name="uq_templates_tenant_key"),
    )
    op.create_index("ix_templates_tenant_id", "templates", ["tenant_id", "id"])
    op.create_table(
        "template_versions",
        sa.Column("id", ID, primary_key=True),
        sa.Column(
            "template_id",
            ID,
            sa.ForeignKey("templates.id", ondelete="CASCADE"),
            nullable=False,
        ),
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
        sa.UniqueConstraint("template_id", "number", name="uq_template_versions_number"),
    )
    op.create_index(
        "ix_template_versions_state", "template_versions", ["template_id", "state", "locale"]
    )


def downgrade() -> None:
    op.drop_index("ix_template_versions_state", "template_versions")
    op.drop_table("template_versions")
    op.drop_index("ix_templates_tenant_id", "templates")
    op.drop_table("templates")
