"""Tables of templates (migration 0026): a tenant's templates, by key, and their
versions, each holding one part per channel it serves.

A template is the tenant's handle (its ``key``, a slug unique per tenant); its content
lives in versions, numbered from 1 per template. A version is a ``draft`` (editable;
``revision`` counts its edits, so a compiled copy cached by ``id:revision`` is never
stale), ``published`` (the live one of its locale: at most one per template and
locale) or ``retired`` (was live, replaced by a later publish). Published and retired
versions never change. ``tenant_id`` is on the versions too, so every read is scoped by
tenant in its own ``WHERE``.
"""

from __future__ import annotations

from sqlalchemy import JSON, Column, ForeignKey, Index, Integer, String, Table, UniqueConstraint

from homing.store.tables.columns import ID, UTCDateTime, metadata

templates = Table(
    "templates",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("key", String(64), nullable=False),
    Column("name", String(200), nullable=False),
    Column("default_locale", String(35), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("tenant_id", "key", name="uq_templates_tenant_key"),
    # A tenant's page of templates, in id order.
    Index("ix_templates_tenant_id", "tenant_id", "id"),
)

template_versions = Table(
    "template_versions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("template_id", ID, ForeignKey("templates.id", ondelete="CASCADE"), nullable=False),
    Column("tenant_id", ID, nullable=False),
    Column("number", Integer, nullable=False),
    Column("locale", String(35), nullable=False),
    Column("state", String(10), nullable=False),
    Column("parts", JSON, nullable=False),
    Column("variables", JSON),
    Column("revision", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("published_at", UTCDateTime),
    UniqueConstraint("template_id", "number", name="uq_template_versions_number"),
    # The live versions of a template, by locale (one lookup per send).
    Index("ix_template_versions_state", "template_id", "state", "locale"),
)

# Email layouts (migration 0032): a tenant's shared frame of its email templates, kept
# and versioned as templates are (a version's ``parts`` is ``{"html": ...}``).
layouts = Table(
    "layouts",
    metadata,
    Column("id", ID, primary_key=True),
    Column("tenant_id", ID, ForeignKey("tenants.id"), nullable=False),
    Column("key", String(64), nullable=False),
    Column("name", String(200), nullable=False),
    Column("default_locale", String(35), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("tenant_id", "key", name="uq_layouts_tenant_key"),
    Index("ix_layouts_tenant_id", "tenant_id", "id"),
)

layout_versions = Table(
    "layout_versions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("layout_id", ID, ForeignKey("layouts.id", ondelete="CASCADE"), nullable=False),
    Column("tenant_id", ID, nullable=False),
    Column("number", Integer, nullable=False),
    Column("locale", String(35), nullable=False),
    Column("state", String(10), nullable=False),
    Column("parts", JSON, nullable=False),
    Column("variables", JSON),
    Column("revision", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("published_at", UTCDateTime),
    UniqueConstraint("layout_id", "number", name="uq_layout_versions_number"),
    Index("ix_layout_versions_state", "layout_id", "state", "locale"),
)
