"""Signed links a recipient opens without signing in: one-click unsubscribe (``/u/…``,
RFC 8058) and the hosted preference page (``/p/…``) (docs/recipients.md, "Links").

A link's token is a version byte, a 12-byte nonce and an AES-256-GCM ciphertext of
what it names: tenant, channel, category, and either a recipient's row id or, for a
send to an address, a keyed hash of that address (``address_ref``). The key is a
subkey of the master key (``Sealer.subkeys``: no new secret is stored), and the
purpose is the associated data, so an unsubscribe token does not open as a
preference token. Nothing in a token is readable without the key (no address, no
id, no category), none can be made or changed without it, and every token is
checked in time linear in its bounded length before anything is looked up. GCM's
tag is compared in constant time by ``cryptography``.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import os
import re
from dataclasses import dataclass
from enum import Enum
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from homing.crypto import AddressRefs, Sealer

__all__ = ["MAX_TOKEN", "LinkClaim", "LinkPurpose", "OptOutLinks"]

_VERSION: Final = 1
_NONCE: Final = 12
_FIELD: Final = 64  # each named field's bound, in bytes (a category key is at most 64)
# 1 version + 12 nonce + 5 length-prefixed fields of at most 64 bytes + 16 tag, as
# base64url: 1 + 12 + 5 * 65 + 16 = 354 bytes, 472 characters at most.
MAX_TOKEN: Final = 480
_TOKEN: Final = re.compile(r"[A-Za-z0-9_-]+")
_LINK_INFO: Final = b"homing:recipient-links:v1"
_FORM_INFO: Final = b"homing:recipient-links:form:v1"


class LinkPurpose(Enum):
    """What a token opens: ``/u/<token>`` or ``/p/<token>``."""

    UNSUBSCRIBE = "u"
    PREFERENCES = "p"


@dataclass(frozen=True, slots=True)
class LinkClaim:
    """What a link names: a tenant's recipient (its row id) or an address (its
    ``address_ref``), a channel and a category (empty for a preference link made for
    no category)."""

    tenant_id: str
    channel: str
    category: str
    recipient_id: str | None = None
    address_ref: str | None = None

    def __repr__(self) -> str:
        return f"LinkClaim(tenant_id={self.tenant_id!r}, category={self.category!r})"


class OptOutLinks:
    """Makes and reads the tokens of recipient links under the deployment's keys."""

    def __init__(self, sealer: Sealer) -> None:
        self._keys = sealer.subkeys(_LINK_INFO)
        self._refs = AddressRefs.of(sealer)
        self._form_key = sealer.subkeys(_FORM_INFO)[0]

    def __repr__(self) -> str:
        return f"OptOutLinks(keys={len(self._keys)})"

    def address_ref(self, tenant_id: str, channel: str, address_key: str) -> str:
        """The keyed hash an address is known by in links and address opt-outs (32 hex
        characters): the same for the same (tenant, channel, address), readable by no one."""
        return self._refs.ref(tenant_id, channel, address_key)

    def address_refs(self, tenant_id: str, channel: str, address_key: str) -> tuple[str, ...]:
        """The address's ref under each master key held, the current one first: what a
        send's check of the address's opt-outs looks for (one stored before a master-key
        rotation is under a previous key)."""
        return self._refs.refs(tenant_id, channel, address_key)

    def issue(self, purpose: LinkPurpose, claim: LinkClaim) -> str:
        """The token of ``claim`` for ``purpose``."""
        kind, subject = "r", claim.address_ref
        if claim.recipient_id is None:
            kind = "a"
        else:
            subject = claim.recipient_id
        if subject is None:
            raise ValueError("a link names a recipient or an address")
        fields = (claim.tenant_id, claim.channel, claim.category, kind, subject)
        plain = b"".join(_field(value) for value in fields)
        nonce = os.urandom(_NONCE)
        sealed = AESGCM(self._keys[0]).encrypt(nonce, plain, purpose.value.encode())
        return _b64(bytes([_VERSION]) + nonce + sealed)

    def read(self, purpose: LinkPurpose, token: str) -> LinkClaim | None:
        """The claim ``token`` carries for ``purpose``; None for anything else (forged,
        cut, too long, another purpose's, made under a key no longer known)."""
        if not 0 < len(token) <= MAX_TOKEN or not _TOKEN.fullmatch(token):
            return None
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError):
            return None
        if len(raw) < 1 + _NONCE + 16 or raw[0] != _VERSION:
            return None
        nonce, sealed = raw[1 : 1 + _NONCE], raw[1 + _NONCE :]
        for key in self._keys:
            try:
                plain = AESGCM(key).decrypt(nonce, sealed, purpose.value.encode())
            except InvalidTag:
                continue
            return _claim(plain)
        return None

    def form_token(self, token: str) -> str:
        """The preference page's CSRF token: an HMAC of its link's token, so it is
        never stored and works only with that link."""
        return hmac.digest(self._form_key, token.encode(), "sha256").hex()


def _field(value: str) -> bytes:
    data = value.encode()
    if len(data) > _FIELD:
        raise ValueError("a link's field is at most 64 bytes")
    return bytes([len(data)]) + data


def _claim(plain: bytes) -> LinkClaim | None:
    values: list[str] = []
    at = 0
    while at < len(plain) and len(values) < 5:
        size = plain[at]
        values.append(plain[at + 1 : at + 1 + size].decode("utf-8", "replace"))
        at += 1 + size
    if len(values) != 5 or at != len(plain) or values[3] not in ("r", "a"):
        return None
    tenant_id, channel, category, kind, subject = values
    if kind == "r":
        return LinkClaim(tenant_id, channel, category, recipient_id=subject)
    return LinkClaim(tenant_id, channel, category, address_ref=subject)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")
