"""The body of ``POST /v1/notifications/chat`` and the chat ids each vendor takes."""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from pydantic import Field, StringConstraints, model_validator

from homing.api.schemas import NotificationCreate
from homing.errors import InvalidRequest

# Telegram's limit for one message, the bound of every chat text (README, "Chat").
MAX_TEXT: Final = 4096

# Telegram: a numeric chat id (negative for groups and channels) or a public
# ``@channelusername`` (5 to 32 characters). Slack: the channel a webhook posts to, kept as
# the job's recipient (the webhook itself decides where it goes).
CHAT_IDS: Final = {
    "telegram": re.compile(r"-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31}"),
    "slack": re.compile(r"[#@]?[A-Za-z0-9][A-Za-z0-9._-]{0,79}"),
}
CHAT_ID_HELP: Final = {
    "telegram": "a numeric chat id or an @channel name",
    "slack": "a channel name such as #alerts",
}


class ChatCreate(NotificationCreate):
    to: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    text: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT)]
    format: Literal["plain", "markdown", "html"] = "plain"
    provider: str | None = Field(default=None, max_length=100)
    priority: Literal["CRITICAL", "NORMAL", "LOW"] | None = None
    ordering_key: str | None = Field(default=None, min_length=1, max_length=255)

    @model_validator(mode="after")
    def _no_nul(self) -> ChatCreate:
        if "\x00" in self.text:
            raise ValueError("'text' must not contain NUL characters")
        return self


def check_chat_id(kind: str, to: str, text_format: str) -> None:
    """InvalidRequest unless ``to`` is a chat id of ``kind``'s form and the vendor can
    render ``text_format`` (linear-time patterns over at most 100 characters)."""
    pattern = CHAT_IDS.get(kind)
    if pattern is not None and not pattern.fullmatch(to):
        raise InvalidRequest(
            f"'to' must be {CHAT_ID_HELP[kind]} for {kind}", {"field": "to", "provider": kind}
        )
    if kind == "slack" and text_format == "html":
        raise InvalidRequest("slack renders plain or markdown text, not html", {"field": "format"})
