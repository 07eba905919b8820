"""The tenant settings resource (``GET/PATCH /v1/settings``): read and change them.

Settings are per tenant and take effect for what happens after the change: a
webhook delivered after ``webhook_signature_format`` changed carries the new format
(deliveries read the settings with their signing secrets).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from homing.addresses import InvalidAddress, canonical
from homing.channels import Channel
from homing.domain.audit import AuditEvent
from homing.domain.tenant_settings import TenantSettings
from homing.errors import InvalidRequest
from homing.models import MAX_TTL_SECONDS, MIN_TTL_SECONDS
from homing.store.tenant_settings import SETTING_NAMES, TenantSettingsStore
from homing.webhooks.signing import SignatureFormat

__all__ = ["MAX_CONTACT_EMAIL", "TenantSettingsManager"]

# The column's width: an address longer than this is no one's (RFC 5321 allows 254).
MAX_CONTACT_EMAIL = 254


class TenantSettingsManager:
    """Reads and changes tenants' settings through ``TenantSettingsStore``.

    ``check_url`` is the webhook URL guard (``WebhookChannel.check_url``): it returns the
    normalised URL or raises ``UrlRefused``; the operations URL must pass it.
    """

    def __init__(self, store: TenantSettingsStore, check_url: Callable[[str], str]) -> None:
        self._store = store
        self._check_url = check_url

    async def get(self, tenant_id: str) -> TenantSettings:
        """The tenant's settings, defaults for what it never changed."""
        return await self._store.get(tenant_id)

    async def update(
        self,
        tenant_id: str,
        changes: Mapping[str, object],
        audit: AuditEvent | None = None,
    ) -> TenantSettings:
        """Change the named settings; InvalidRequest for a name or value not allowed
        (the API's schema refuses those first; this guards every other caller)."""
        unknown = sorted(set(changes) - SETTING_NAMES)
        if unknown:
            raise InvalidRequest("unknown settings", {"unknown": unknown})
        values: dict[str, object] = {}
        fmt = changes.get("webhook_signature_format")
        if fmt is not None:
            allowed = [f.value for f in SignatureFormat]
            if fmt not in allowed:
                raise InvalidRequest(
                    "webhook_signature_format is not allowed", {"allowed": allowed}
                )
            values["webhook_signature_format"] = fmt
        if "default_ttl_seconds" in changes:
            values["default_ttl_seconds"] = default_ttls(changes["default_ttl_seconds"])
        values.update(self._notice_targets(changes))
        if "unsubscribe_mailbox" in changes:
            values["unsubscribe_mailbox"] = unsubscribe_mailbox(changes["unsubscribe_mailbox"])
        if "quiet_hours" in changes:
            values["quiet_hours"] = quiet_hours(changes["quiet_hours"])
        return await self._store.update(tenant_id, values, audit)

    def _notice_targets(self, changes: Mapping[str, object]) -> dict[str, object]:
        """``contact_email`` (one mailbox, canonical) and ``operations_url`` (through
        the webhook URL guard); None clears either. Both are bounded before parsing."""
        values: dict[str, object] = {}
        if "contact_email" in changes:
            email = _text_or_none(changes["contact_email"], "contact_email")
            if email is not None:
                try:
                    email = canonical(email)
                except InvalidAddress as exc:
                    raise InvalidRequest("contact_email is not one email address") from exc
                if len(email) > MAX_CONTACT_EMAIL:
                    raise InvalidRequest("contact_email is too long", {"max": MAX_CONTACT_EMAIL})
            values["contact_email"] = email
        if "operations_url" in changes:
            url = _text_or_none(changes["operations_url"], "operations_url")
            values["operations_url"] = None if url is None else self._check_url(url)
        return values


# A bare addr-spec in US-ASCII (it goes into a header field as a mailto: URI, RFC 6068),
# without the characters a URI or the field would need escaped.
_MAILBOX = re.compile(r"[A-Za-z0-9.!#$&'*+/=^_`{|}~-]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")


def unsubscribe_mailbox(value: object) -> str | None:
    """The mailbox a marketing email's ``List-Unsubscribe`` names (``unsub@acme.example``),
    checked by shape within its bound; None clears it. InvalidRequest otherwise."""
    text = _text_or_none(value, "unsubscribe_mailbox")
    if text is None:
        return None
    if len(text) > MAX_CONTACT_EMAIL or not _MAILBOX.fullmatch(text):
        raise InvalidRequest(
            "unsubscribe_mailbox is one plain US-ASCII address (local@domain)",
            {"max": MAX_CONTACT_EMAIL},
        )
    return text.lower()


_HHMM = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")


def quiet_hours(value: object) -> dict[str, str] | None:
    """``{"start": "21:00", "end": "08:00"}`` checked (two different HH:MM times,
    nothing else); None clears it. InvalidRequest otherwise."""
    if value is None:
        return None
    if (
        not isinstance(value, Mapping)
        or set(value) != {"start", "end"}
        or not all(isinstance(v, str) and _HHMM.fullmatch(v) for v in value.values())
        or value["start"] == value["end"]
    ):
        raise InvalidRequest(
            'quiet_hours is {"start": "HH:MM", "end": "HH:MM"}, two different times'
        )
    return {"start": str(value["start"]), "end": str(value["end"])}


def _text_or_none(value: object, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise InvalidRequest(f"{name} is text or null")


def default_ttls(value: object) -> dict[str, int]:
    """``{"email": 3600, ...}`` checked: known channels, whole seconds within the ttl
    bounds (docs/reliability.md "Expiry"); InvalidRequest otherwise."""
    channels = {c.value for c in Channel}
    if not isinstance(value, Mapping) or not set(value) <= channels:
        raise InvalidRequest(
            "default_ttl_seconds maps channels to seconds", {"allowed": sorted(channels)}
        )
    for seconds in value.values():
        if type(seconds) is not int or not MIN_TTL_SECONDS <= seconds <= MAX_TTL_SECONDS:
            raise InvalidRequest(
                "a default ttl is whole seconds",
                {"min": MIN_TTL_SECONDS, "max": MAX_TTL_SECONDS},
            )
    return {str(channel): int(seconds) for channel, seconds in value.items()}
