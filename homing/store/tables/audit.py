"""The ``audit_events`` table: who changed what in a tenant's configuration, and when.

Defined on the shared metadata (``homing.store.tables.columns``); ``homing.store.tables.core``
imports this module so that ``core.metadata`` holds it. No foreign key to
``tenants``: an event outlives job retention and names platform-wide changes too
(``tenant_id`` NULL).
"""

from __future__ import annotations

from sqlalchemy import JSON, Column, Index, String, Table

from homing.store.tables.columns import ID, UTCDateTime, metadata

audit_events = Table(
    "audit_events",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID),
    Column("actor_kind", String(16), nullable=False),
    Column("actor_id", String(64), nullable=False),
    Column("actor_name", String(200)),
    Column("action", String(40), nullable=False),
    Column("target_type", String(40), nullable=False),
    Column("target_id", String(320)),
    Column("changes", JSON, nullable=False),
    Column("request_id", String(128)),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_audit_events_tenant", "tenant_id", "id"),
    Index("ix_audit_events_created_at", "created_at"),
)
