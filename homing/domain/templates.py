"""A template, a version of one and the states of a version (docs/templates.md); the SQL
is ``homing.store.templates``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

# The states of a version.
DRAFT = "draft"
PUBLISHED = "published"
RETIRED = "retired"


@dataclass(kw_only=True, frozen=True, slots=True)
class TemplateRow:
    """One template: the tenant's handle on its versions."""

    id: str
    tenant_id: str
    key: str
    name: str
    default_locale: str
    created_at: datetime


@dataclass(kw_only=True, frozen=True, slots=True)
class VersionRow:
    """One version of a template: its parts (one per channel) and its state."""

    id: str
    template_id: str
    tenant_id: str
    number: int
    locale: str
    state: str
    parts: dict[str, Any]
    variables: dict[str, Any] | None
    revision: int
    created_at: datetime
    updated_at: datetime
    published_at: datetime | None

    @property
    def cache_key(self) -> str:
        """What a render worker caches this version's compiled parts under: the id and
        the edit count, so an edited draft is compiled again."""
        return f"{self.id}:{self.revision}"

    def __repr__(self) -> str:
        return f"VersionRow(id={self.id!r}, number={self.number}, state={self.state!r})"
