"""The body of ``POST /v1/notifications/chat`` and the chat ids each vendor takes."""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from homing.api.schemas.email import SCHEDULED_IN_LINE, PersonalCreate
from homing.api.schemas.shared import examples
from homing.api.schemas.templates import Templated, content_or_template, no_template_fields
from homing.errors import InvalidRequest
from homing.models import ChatFormat
from homing.vendors import VENDORS

_FORMATS: Final = ("plain", "markdown", "html")
# Telegram's limit for one message, the bound of every chat text (docs/benchmarks.md, "Chat").
MAX_TEXT: Final = 4096

# The chat ids each chat vendor takes (its descriptor's ``chat``).
CHAT_IDS: Final = {
    name: re.compile(v.chat.pattern) for name, v in VENDORS.items() if v.chat is not None
}
CHAT_ID_HELP: Final = {name: v.chat.help for name, v in VENDORS.items() if v.chat is not None}


class ChatCreate(PersonalCreate, Templated):
    to: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None
    # Or ``template`` (and ``data``) in place of text and format: the template's chat
    # part has its own format.
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT)] | None = None
    format: ChatFormat = "plain"
    provider: str | None = Field(default=None, max_length=100)
    priority: Literal["CRITICAL", "NORMAL", "LOW"] | None = None
    ordering_key: str | None = Field(default=None, min_length=1, max_length=255)

    @model_validator(mode="after")
    def _no_nul(self) -> ChatCreate:
        self._one_destination(self.to)
        if self.send_at is not None and self.ordering_key is not None:
            raise ValueError(SCHEDULED_IN_LINE)
        if self.template is not None:
            given = {"text": self.text is not None, "format": "format" in self.model_fields_set}
            content_or_template(self, given)
        elif self.text is None:
            raise ValueError("give 'text' (or 'template')")
        else:
            no_template_fields(self)
            if "\x00" in self.text:
                raise ValueError("'text' must not contain NUL characters")
        return self

    model_config = ConfigDict(
        json_schema_extra=examples(
            {"to": "-1001234567890", "text": "*Deploy* finished", "format": "markdown"}
        ),
    )


def check_chat_id(kind: str, to: str, text_format: str) -> None:
    """InvalidRequest unless ``to`` is a chat id of ``kind``'s form and the vendor can
    render ``text_format`` (linear-time patterns over at most 100 characters)."""
    pattern = CHAT_IDS.get(kind)
    if pattern is not None and not pattern.fullmatch(to):
        raise InvalidRequest(
            f"'to' must be {CHAT_ID_HELP[kind]} for {kind}", {"field": "to", "provider": kind}
        )
    address = VENDORS[kind].chat if kind in VENDORS else None
    if address is not None and text_format not in address.formats:
        rendered = " or ".join(sorted(address.formats, key=_FORMATS.index))
        raise InvalidRequest(
            f"{kind} renders {rendered} text, not {text_format}", {"field": "format"}
        )
