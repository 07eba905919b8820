"""Address opt-outs: one-click unsubscribes from a category by an address-only send.

``address_opt_outs``: (tenant, channel, category, address ref) where the ref is a keyed
hash of the address (``homing.managers.optout_links.OptOutLinks.address_ref``), never
the address; a send to that address in that category ends SUPPRESSED (``preference``).
``tenant_settings`` gains ``unsubscribe_mailbox``: the ``mailto:`` a marketing email's
``List-Unsubscribe`` names besides its link.

Revision ID: 0027
Revises: 0026
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from homing.migrations.types import ID, UTCDateTime

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "address_opt_outs",
        sa.Column("tenant_id", ID, sa.ForeignKey("tenants.id"), nullable=False),
        sa.Column("channel", sa.String(20), nullable=False),
        sa.Column("category_key", sa.String(64), nullable=False),
        sa.Column("address_ref", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime, nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "channel", "category_key", "address_ref", name="pk_address_opt_outs"
        ),
    )
    op.add_column("tenant_settings", sa.Column("unsubscribe_mailbox", sa.String(254)))


def downgrade() -> None:
    op.drop_column("tenant_settings", "unsubscribe_mailbox")
    op.drop_table("address_opt_outs")
