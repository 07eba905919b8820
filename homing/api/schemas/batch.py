"""Bodies of the email batch (``/v1/notifications/email/batch``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from homing.api.schemas.email import EmailCreate
from homing.api.schemas.shared import Strict, examples

MAX_BATCH = 1000


class EmailBatchItem(EmailCreate):
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=255)


class EmailBatchCreate(Strict):
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_BATCH)

    model_config = ConfigDict(
        json_schema_extra=examples(
            {
                "messages": [
                    {
                        "to": "ada@example.com",
                        "from": "hello@acme.example",
                        "subject": "Hi",
                        "text": "Hello Ada",
                    },
                    {
                        "recipient": "user_42",
                        "from": "hello@acme.example",
                        "template": "welcome",
                        "idempotency_key": "welcome-user_42",
                    },
                ]
            }
        ),
    )


class ItemError(BaseModel):
    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class BatchItemResult(BaseModel):
    index: int
    id: str | None = None
    status: str | None = None
    replayed: bool | None = None
    error: ItemError | None = None


class BatchResult(BaseModel):
    accepted: int
    replayed: int
    rejected: int
    results: list[BatchItemResult]
