"""How a notification travels: the ``Channel`` enum, on its own so that the vendor
descriptors (``homing.vendors``) read it without the domain types, and the domain types
(``homing.models``) may read the descriptors. Every module imports it from here."""

from __future__ import annotations

import enum

__all__ = ["Channel"]


class Channel(enum.StrEnum):
    """How a notification travels: email, SMS, chat or webhook."""

    EMAIL = "email"
    WEBHOOK = "webhook"
    SMS = "sms"
    CHAT = "chat"
    # Stored by Homing itself, in the recipient's feed (docs/feed.md): no provider.
    IN_APP = "in_app"
