"""What every chat adapter shares (``chat_message``): the message, the refusal of a
blocked chat, the adapter's protocol and the bound on a vendor's retry hint. The
adapters are the chat vendors' own (``homing/vendors/<name>/adapter.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import httpx

from homing.models import ChatFormat, FailureClass
from homing.providers.base import ProviderFailure, SendResult

Format = ChatFormat

# Telegram's limit for one message (after entity parsing); the API bounds every chat text by it.
MAX_TEXT = 4096


@dataclass(frozen=True, slots=True)
class OutgoingChat:
    """What a chat adapter sends: to whom (a chat id, or a channel's label where the
    webhook decides), the text and how it is formatted."""

    job_id: str
    to: str
    text: str
    format: Format = "plain"


class RecipientBlocked(ProviderFailure):
    """The chat refused the bot (blocked, kicked, never started): the message is
    permanently undeliverable and the chat is suppressed for this vendor."""

    def __init__(self, detail: str, *, status_code: int | None = None) -> None:
        super().__init__(FailureClass.MESSAGE_PERMANENT, detail, status_code=status_code)


class ChatProvider(Protocol):
    """One chat vendor: send one message, or check the credentials."""

    name: ClassVar[str]
    supports_idempotency: ClassVar[bool]

    async def send(self, message: OutgoingChat) -> SendResult: ...

    async def check_credentials(self) -> None: ...


class ChatProviderFactory(Protocol):
    """Builds a chat adapter from decrypted credentials, config and an injected client."""

    def __call__(
        self, credentials: dict[str, Any], config: dict[str, Any], http: httpx.AsyncClient
    ) -> ChatProvider: ...


# A vendor's retry hint is its own text: a bogus one (10**12, NaN, negative) is bounded.
MAX_RETRY_AFTER = 3600.0


def bounded_wait(value: Any) -> float | None:
    """``value`` as seconds to wait, within [0, ``MAX_RETRY_AFTER``]; None when it is no
    number (a bool is none either)."""
    if isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)
