"""Bodies of the API-key routes (``/v1/keys``)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from homing.api.schemas.shared import Name, Strict
from homing.domain.keys import ApiKey


class ApiKeyCreate(Strict):
    name: Name = "unnamed"
    test: bool = False


class ApiKeyPublic(BaseModel):
    id: str
    name: str
    prefix: str
    test: bool
    created_at: datetime
    last_used_at: datetime | None

    @classmethod
    def of(cls, key: ApiKey) -> ApiKeyPublic:
        return cls(
            id=key.id,
            name=key.name,
            prefix=key.prefix,
            test=key.test,
            created_at=key.created_at,
            last_used_at=key.last_used_at,
        )


class ApiKeyIssued(ApiKeyPublic):
    key: str = Field(description="the API key itself; shown this once, never again")
