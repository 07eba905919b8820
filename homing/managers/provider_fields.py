"""What a tenant fills in to add each vendor: one table of fields, derived from the
vendor descriptors (``homing.vendors``) and the registry the accounts manager checks with.

The required credentials are exactly ``CREDENTIAL_FIELDS`` (what
``ProviderAccounts.register`` requires) and a field is secret exactly when
``SECRET_CREDENTIAL_FIELDS`` names it (what the preview masks), so a form drawn from
this table and the manager that checks it never disagree. Beside them: the optional
credentials an adapter reads and the few ``config`` values a tenant sets at the start
(the API base URL, a sender, a region). The console draws its form from this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from homing.channels import Channel
from homing.providers.registry import (
    CREDENTIAL_FIELDS,
    PROVIDER_CHANNELS,
    SECRET_CREDENTIAL_FIELDS,
)
from homing.vendors import VENDORS as VENDORS_BY_NAME

__all__ = ["MAX_FIELD_CHARS", "VENDORS", "VENDOR_FIELDS", "VendorField", "fields_of"]

Kind = Literal["text", "secret", "flag"]
# A token, a password or a URL: longer is no credential of any vendor.
MAX_FIELD_CHARS = 1000

_LABELS: Final[dict[str, str]] = {
    "api_key": "API key",
    "api_secret": "API secret",
    "account_sid": "Account SID",
    "auth_token": "Auth token",
    "account_token": "Account token (for sending domains)",
    "bot_token": "Bot token",
    "webhook_url": "Webhook URL",
    "starttls": "Use STARTTLS",
    "base_url": "API base URL (leave empty for the vendor's own)",
    "from": "Sender (number or name)",
    "message_stream": "Message stream",
}


@dataclass(frozen=True, slots=True)
class VendorField:
    """One input of a vendor's form: a credential or (``config``) a config value."""

    name: str
    label: str
    kind: Kind
    required: bool
    config: bool = False

    @property
    def secret(self) -> bool:
        return self.kind == "secret"


def _credential(name: str, required: bool, flag: bool) -> VendorField:
    kind: Kind = "flag" if flag else "text"
    if name in SECRET_CREDENTIAL_FIELDS:
        kind = "secret"
    label = _LABELS.get(name, name.replace("_", " ").capitalize())
    return VendorField(name, label, kind, required)


def fields_of(vendor: str) -> tuple[VendorField, ...]:
    """The fields of ``vendor``'s form, required credentials first (empty for a name
    that is no vendor)."""
    descriptor = VENDORS_BY_NAME.get(vendor)
    if descriptor is None or vendor not in PROVIDER_CHANNELS:
        return ()
    required = CREDENTIAL_FIELDS.get(vendor, ())
    flags = {c.name for c in descriptor.credentials if c.flag}
    optional = [n for n in descriptor.optional if n not in required]
    config = [
        VendorField(n, _LABELS.get(n, n.replace("_", " ").capitalize()), "text", False, True)
        for n in descriptor.config
    ]
    return (
        *(_credential(n, True, n in flags) for n in required),
        *(_credential(n, False, n in flags) for n in optional),
        *config,
    )


# Vendor → its channel, in the registry's order (email, SMS, chat).
VENDORS: Final[dict[str, Channel]] = dict(PROVIDER_CHANNELS)
VENDOR_FIELDS: Final[dict[str, tuple[VendorField, ...]]] = {v: fields_of(v) for v in VENDORS}
