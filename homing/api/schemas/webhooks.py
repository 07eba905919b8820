"""Request and response bodies of the webhook endpoints."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints, model_validator

from homing.api.schemas.email import SCHEDULED_IN_LINE, OneChannelCreate
from homing.api.schemas.shared import PriorityName, Strict, examples
from homing.api.schemas.templates import Templated, content_or_template, no_template_fields
from homing.webhooks.message import header_problem

MAX_EVENT_TYPE = 200
_EVENT_TYPE = re.compile(r"[A-Za-z0-9._:/-]+")

MAX_TENANT_HEADERS = 50

Url = Annotated[str, StringConstraints(min_length=1, max_length=2048)]


class WebhookCreate(OneChannelCreate, Templated):
    url: Url
    # Or ``template`` (and ``data``): the template's webhook part is the payload. Any
    # JSON, null included, when given; left out only with a template.
    payload: JsonValue = None
    headers: dict[str, str] = Field(default_factory=dict, max_length=MAX_TENANT_HEADERS)
    event_type: str | None = None
    priority: PriorityName | None = None
    ordering_key: str | None = Field(default=None, min_length=1, max_length=255)

    @model_validator(mode="after")
    def _valid(self) -> WebhookCreate:
        given = "payload" in self.model_fields_set
        if self.send_at is not None and self.ordering_key is not None:
            raise ValueError(SCHEDULED_IN_LINE)
        if self.template is not None:
            content_or_template(self, {"payload": given})
        elif not given:
            raise ValueError("give 'payload' (or 'template')")
        else:
            no_template_fields(self)
        event_type = self.event_type
        # The length first: no pattern ever runs over more than the bound.
        if event_type is not None and (
            len(event_type) > MAX_EVENT_TYPE or not _EVENT_TYPE.fullmatch(event_type)
        ):
            raise ValueError("'event_type' is 1-200 of letters, digits and . _ : / -")
        seen: set[str] = set()
        for name, value in self.headers.items():
            problem = header_problem(name, value)
            if problem is None and name.lower() in seen:
                problem = f"header {name!r} is given twice"
            if problem is not None:
                raise ValueError(problem)
            seen.add(name.lower())
        return self

    model_config = ConfigDict(
        json_schema_extra=examples(
            {
                "url": "https://hooks.example.com/orders",
                "event_type": "order.paid",
                "payload": {"order_id": "o_123", "amount": 4200},
            }
        ),
    )


class WebhookSecretIssued(BaseModel):
    """A new secret: shown in this response only."""

    secret: str
    preview: str
    created_at: datetime
    previous_expires_at: datetime | None = None


class WebhookSecretStatus(BaseModel):
    configured: bool
    preview: str | None
    created_at: datetime | None
    previous_preview: str | None
    previous_expires_at: datetime | None


class EndpointUrl(Strict):
    url: Url


class GoneEndpointPublic(BaseModel):
    url: str
    job_id: str
    gone_at: datetime
