"""Telegram does not sign its webhooks: it repeats a secret in a header.

A bot's webhook is set with ``setWebhook(url, secret_token=…)``; every update Telegram
posts then carries ``X-Telegram-Bot-Api-Secret-Token`` with that value, 1 to 256
characters of ``A-Za-z0-9_-``. It is compared in constant time. Nothing is timestamped:
a replayed update verifies, and is then a repeat the journal answers (by ``update_id``)
without applying it twice.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from typing import Any, Final

from homing.crypto import mask_password
from homing.inbound.verification import Signed, VerificationFailed, lowered

HEADER: Final = "x-telegram-bot-api-secret-token"
MAX_TOKEN: Final = 256
_TOKEN: Final = re.compile(r"[A-Za-z0-9_-]+")


def check_token(value: object) -> str:
    """``value`` if it is a secret token Telegram accepts, else ValueError."""
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_TOKEN:
        raise ValueError("the secret token must be 1 to 256 characters")
    if _TOKEN.fullmatch(value) is None:
        raise ValueError("the secret token may hold only A-Z, a-z, 0-9, _ and -")
    return value


def verify(secret_token: str, headers: Mapping[str, str]) -> None:
    """Raise VerificationFailed unless the header carries the account's secret token."""
    given = lowered(headers).get(HEADER, "")
    if not given or len(given) > MAX_TOKEN or not given.isascii():
        raise VerificationFailed()
    if not hmac.compare_digest(given.encode(), secret_token.encode()):
        raise VerificationFailed()


def accept(value: Any) -> None:
    """ValueError unless ``value`` is a secret token ``setWebhook`` accepts."""
    check_token(value)


def check(value: Any, request: Signed) -> None:
    """``verify`` with the bot's secret token."""
    verify(value, request.headers)


def preview(value: Any) -> str:
    """``setWebhook``'s secret token is chosen by a human: masked as a password is."""
    return mask_password(str(value))
