"""Bodies of the email layout routes (docs/templates.md, "Layouts"): a layout is created
as a template is (key, name, default locale) and its versions hold one field, ``html``,
which must show ``{{ content }}`` (checked by ``homing.managers.layouts``, 422
``template_error``)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from homing.api.schemas.shared import Strict, examples
from homing.api.schemas.templates import Locale, Source, TemplateCreate
from homing.domain.templates import TemplateRow, VersionRow


class LayoutCreate(TemplateCreate):
    pass

    model_config = ConfigDict(
        json_schema_extra=examples({"key": "brand", "name": "Brand frame"}),
    )


class LayoutPublic(BaseModel):
    id: str
    key: str
    name: str
    default_locale: str
    # The locales that have a live (published) version.
    locales: list[str]
    created_at: datetime

    @classmethod
    def of(cls, row: TemplateRow, locales: list[str]) -> LayoutPublic:
        return cls(
            id=row.id,
            key=row.key,
            name=row.name,
            default_locale=row.default_locale,
            locales=locales,
            created_at=row.created_at,
        )


class LayoutVersionCreate(Strict):
    html: Source
    locale: Locale | None = None

    model_config = ConfigDict(
        json_schema_extra=examples({"html": "<main>{{ content }}</main><footer>Acme</footer>"}),
    )


class LayoutVersionEdit(Strict):
    html: Source | None = None
    locale: Locale | None = None


class LayoutVersionPublic(BaseModel):
    id: str
    layout_id: str
    number: int
    locale: str
    state: str
    html: str
    created_at: datetime
    updated_at: datetime
    published_at: datetime | None = None

    @classmethod
    def of(cls, row: VersionRow) -> LayoutVersionPublic:
        return cls(
            id=row.id,
            layout_id=row.template_id,
            number=row.number,
            locale=row.locale,
            state=row.state,
            html=row.parts["html"],
            created_at=row.created_at,
            updated_at=row.updated_at,
            published_at=row.published_at,
        )
