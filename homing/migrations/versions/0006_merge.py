"""Join the four capability branches (0002-0005) into one head.

From here the chain is linear: every new revision names the one before it, and
``homing migrate`` upgrades to ``head``.

Revision ID: 0006
Revises: 0002, 0003, 0004, 0005
"""

from __future__ import annotations

revision = "0006"
down_revision = ("0002", "0003", "0004", "0005")
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
