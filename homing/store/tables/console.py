"""Tables of the console's people (migrations 0018, 0020): users, their memberships of
tenants, their signed-in sessions and the invitations to become a member; and (migration
0021) the flash messages queued for a session's next page.

They live beside ``homing.store.tables.core`` on the same ``metadata``; ``schema`` imports
this module, so ``core.metadata`` holds these tables too. A session is stored by the
SHA-256 of its token only, and so is an invitation: a database reader cannot sign in
or accept an invitation with what it reads.
"""

from __future__ import annotations

from sqlalchemy import Boolean, Column, ForeignKey, Index, String, Table, Text, false

from homing.store.tables.columns import ID, UTCDateTime, metadata

users = Table(
    "users",
    metadata,
    Column("id", ID, primary_key=True),
    # Lower-cased: one person, one row, however they type it.
    Column("email", String(254), nullable=False, unique=True),
    Column("password_hash", String(200), nullable=False),
    Column("operator", Boolean, nullable=False, server_default=false()),
    Column("created_at", UTCDateTime, nullable=False),
)

memberships = Table(
    "memberships",
    metadata,
    Column("user_id", ID, ForeignKey("users.id"), primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), primary_key=True),
    Column("role", String(10), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_memberships_tenant", "tenant_id"),
)

console_sessions = Table(
    "console_sessions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("user_id", ID, ForeignKey("users.id"), nullable=False, index=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    # The absolute end, whatever the activity: created_at + HOMING_CONSOLE_SESSION_HOURS.
    Column("expires_at", UTCDateTime, nullable=False),
)

console_flashes = Table(
    "console_flashes",
    metadata,
    Column("id", ID, primary_key=True),
    # A session's flashes end with it: closed, expired and swept, or signed out.
    Column(
        "session_id",
        ID,
        ForeignKey("console_sessions.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("kind", String(10), nullable=False),
    Column("message", String(300), nullable=False),
    # A one-time secret to show with the message, sealed under the master key.
    Column("secret_sealed", Text),
    Column("created_at", UTCDateTime, nullable=False),
)

invitations = Table(
    "invitations",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    # As ``homing.managers.people.normal_email`` writes it.
    Column("email", String(254), nullable=False),
    Column("role", String(10), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    # None when the ``homing`` command invited.
    Column("invited_by", ID, ForeignKey("users.id")),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("accepted_at", UTCDateTime),
    Column("revoked_at", UTCDateTime),
    # The current token went by mail to ``email``: the link is the mailbox's proof.
    Column("mailed", Boolean, nullable=False, server_default=false()),
    Index("ix_invitations_tenant_email", "tenant_id", "email"),
)
