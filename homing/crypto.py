"""Secrets at rest (docs/architecture.md, "Secrets").

- ``Sealer``: AES-256-GCM with a key id; the associated data binds each ciphertext
  to its table, row and field, so a ciphertext copied elsewhere does not open.
- API keys: high-entropy ``hk_…`` tokens stored as SHA-256, compared in constant time.
- ``Sealer.request_hash``: the fingerprint an idempotent request is stored with, an
  HMAC-SHA256 under a subkey HKDF derives from the master key (never the AES key
  itself), so a database reader cannot test guesses of a tenant's headers or body.
- ``AddressRefs``: the keyed hash an address is known by once it must not be kept in
  clear (an address's one-click unsubscribe, an erased address's suppression).
- ``mask``: the only place a plaintext secret is shown again, as ``sk_…9f2c`` for a
  vendor-issued key; ``mask_password`` for anything a human chose, which shows nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerifyMismatchError
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from homing.errors import ConfigError, DecryptionError

_FORMAT = "v1"
API_KEY_PREFIX = "hk_"
TEST_API_KEY_PREFIX = "hk_test_"
# "h2:<key id>:<base64url HMAC>" (59 characters). Hashes stored before it are the bare
# hex SHA-256 of the same canonical bytes; they still match (``RequestHash.accepted``).
REQUEST_HASH_VERSION = "h2"
_REQUEST_HASH_INFO = b"homing:request-hash:v2"
# The subkey of address refs: the recipient links' own, so an address's opt-out and its
# erased suppression are known by the same hash.
ADDRESS_REF_INFO = b"homing:recipient-links:address:v1"
# An erased address's suppression is stored as this prefix and its ref: no address key
# (an email's has an "@", a phone number's a "+", a chat's a ":") starts with it.
HASHED_ADDRESS_PREFIX = "#"


def derive_subkey(key: bytes, info: bytes) -> bytes:
    """A 32-byte key for one purpose (``info``), derived from a master key with HKDF."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(key)


@dataclass(frozen=True, slots=True)
class RequestHash:
    """An idempotent request's fingerprint: ``stored`` goes with a new job; a stored
    job whose hash is any of ``accepted`` was the same request (under the current
    key, a previous master key, or the unkeyed SHA-256 stored before the HMAC)."""

    stored: str
    accepted: frozenset[str]


@dataclass(frozen=True, slots=True)
class MasterKey:
    """A 32-byte master key and its key id, which every ciphertext it seals carries."""

    key_id: str
    key: bytes

    def __repr__(self) -> str:
        return f"MasterKey(key_id={self.key_id!r})"

    @classmethod
    def from_b64(cls, encoded: str) -> MasterKey:
        """Parse a base64 32-byte key; the key id is derived from the key itself."""
        try:
            raw = base64.b64decode(encoded.strip(), validate=True)
        except ValueError as exc:
            raise ConfigError("HOMING_SECRET_KEY is not valid base64") from exc
        if len(raw) != 32:
            raise ConfigError("HOMING_SECRET_KEY must decode to exactly 32 bytes")
        key_id = hashlib.sha256(b"homing-key-id:" + raw).hexdigest()[:12]
        return cls(key_id=key_id, key=raw)


class AddressRefs:
    """Keyed hashes of addresses: HMAC-SHA256 of (tenant, channel, address key) under
    a subkey of the master key, cut to 32 hex characters. The same for the same
    (tenant, channel, address), readable by no one, and another tenant's differs.

    A new hash is made under the current key (``ref``, ``hashed``); a stored one is
    matched under every key the service holds (``refs``, ``hashed_forms``: current
    first), as ``RequestHash`` is, so a hash stored before a rotation still holds
    while its key is in ``HOMING_PREVIOUS_SECRET_KEYS``. With no previous key that is
    one HMAC per address, as before.
    """

    __slots__ = ("_key", "_keys")

    def __init__(self, key: bytes, *previous: bytes) -> None:
        self._key = key
        self._keys = (key, *previous)

    def __repr__(self) -> str:
        return "AddressRefs()"

    @classmethod
    def of(cls, sealer: Sealer) -> AddressRefs:
        """The refs under ``sealer``'s master keys, the current one first."""
        return cls(*sealer.subkeys(ADDRESS_REF_INFO))

    def ref(self, tenant_id: str, channel: str, address_key: str) -> str:
        """The keyed hash of one address key (32 hex characters), under the current key."""
        message = "\0".join((tenant_id, channel, address_key)).encode()
        return hmac.digest(self._key, message, "sha256")[:16].hex()

    def refs(self, tenant_id: str, channel: str, address_key: str) -> tuple[str, ...]:
        """The address's ref under each held key, the current one first."""
        message = "\0".join((tenant_id, channel, address_key)).encode()
        if len(self._keys) == 1:
            return (hmac.digest(self._key, message, "sha256")[:16].hex(),)
        return tuple(hmac.digest(key, message, "sha256")[:16].hex() for key in self._keys)

    def hashed(self, tenant_id: str, channel: str, address_key: str) -> str:
        """What an erased address's suppression is stored as: ``#`` and its ref under
        the current key."""
        message = f"{tenant_id}\0{channel}\0{address_key}".encode()
        return HASHED_ADDRESS_PREFIX + hmac.digest(self._key, message, "sha256")[:16].hex()

    def hashed_forms(self, tenant_id: str, channel: str, address_key: str) -> tuple[str, ...]:
        """What an erased address's suppression may be stored as: ``#`` and its ref
        under each held key, the current one first. Called for every accepted and
        claimed job with an address, so ``ref`` is inlined."""
        message = f"{tenant_id}\0{channel}\0{address_key}".encode()
        if len(self._keys) == 1:  # no rotation: one HMAC and no loop, as before
            return (HASHED_ADDRESS_PREFIX + hmac.digest(self._key, message, "sha256")[:16].hex(),)
        return tuple(
            HASHED_ADDRESS_PREFIX + hmac.digest(key, message, "sha256")[:16].hex()
            for key in self._keys
        )


def generate_master_key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def load_or_create_key_file(data_dir: Path) -> tuple[str, bool]:
    """Return the embedded master key, creating it (mode 0600) on first run."""
    path = data_dir / "secret.key"
    if path.exists():
        return path.read_text().strip(), False
    data_dir.mkdir(parents=True, exist_ok=True)
    encoded = generate_master_key()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(encoded + "\n")
    return encoded, True


def _aad(table: str, row_id: str, field: str) -> bytes:
    return f"homing:{table}:{row_id}:{field}".encode()


class Sealer:
    """Encrypts with the current master key; decrypts with any known key."""

    def __init__(self, current: MasterKey, previous: Iterable[MasterKey] = ()) -> None:
        self._current = current
        self._keys = {current.key_id: current}
        for key in previous:
            self._keys.setdefault(key.key_id, key)
        # Current key first; derived once, as a request is hashed under each.
        self._request_keys = {
            key_id: derive_subkey(key.key, _REQUEST_HASH_INFO) for key_id, key in self._keys.items()
        }

    def __repr__(self) -> str:
        return f"Sealer(current={self._current.key_id!r}, keys={len(self._keys)})"

    @property
    def current_key_id(self) -> str:
        return self._current.key_id

    def seal(self, plaintext: bytes, *, table: str, row_id: str, field: str) -> str:
        nonce = os.urandom(12)
        ciphertext = AESGCM(self._current.key).encrypt(nonce, plaintext, _aad(table, row_id, field))
        parts = (_FORMAT, self._current.key_id, _b64(nonce), _b64(ciphertext))
        return ":".join(parts)

    def open(self, sealed: str, *, table: str, row_id: str, field: str) -> bytes:
        try:
            version, key_id, nonce_b64, ct_b64 = sealed.split(":")
        except ValueError as exc:
            raise DecryptionError("sealed value is malformed") from exc
        key = self._keys.get(key_id)
        if version != _FORMAT or key is None:
            raise DecryptionError(f"no master key with id {key_id!r}")
        try:
            return AESGCM(key.key).decrypt(
                _unb64(nonce_b64), _unb64(ct_b64), _aad(table, row_id, field)
            )
        except (InvalidTag, ValueError) as exc:
            raise DecryptionError("sealed value does not open for this row and field") from exc

    def subkeys(self, info: bytes) -> tuple[bytes, ...]:
        """A 32-byte key for one purpose (``info``) under each known master key, the
        current one first: what a signed link is made with and checked against, so a
        link made before a rotation still opens while its key is a previous one."""
        return tuple(derive_subkey(key.key, info) for key in self._keys.values())

    def key_id_of(self, sealed: str) -> str:
        return sealed.split(":")[1]

    def request_hash(self, canonical: bytes) -> RequestHash:
        """The fingerprint of one request's canonical bytes (see ``RequestHash``).

        After a rotation, jobs hashed under a previous key still match while that key
        is in ``HOMING_PREVIOUS_SECRET_KEYS``; once it is removed they answer as a
        conflict rather than a replay (nothing is sent twice either way).
        """
        forms = [
            f"{REQUEST_HASH_VERSION}:{key_id}:{_b64(hmac.digest(key, canonical, 'sha256'))}"
            for key_id, key in self._request_keys.items()
        ]
        legacy = hashlib.sha256(canonical).hexdigest()
        return RequestHash(forms[0], frozenset([*forms, legacy]))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def generate_api_key(*, test: bool = False) -> str:
    """A new platform API key: prefix + 32 random bytes, shown to the tenant once."""
    prefix = TEST_API_KEY_PREFIX if test else API_KEY_PREFIX
    return prefix + secrets.token_urlsafe(32)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_key_display_prefix(key: str) -> str:
    """What we keep in clear to let a tenant recognise a key: its first characters."""
    return key[: len(TEST_API_KEY_PREFIX) + 4] if key.startswith(TEST_API_KEY_PREFIX) else key[:7]


def constant_time_equals(a: str | bytes, b: str | bytes) -> bool:
    left = a.encode() if isinstance(a, str) else a
    right = b.encode() if isinstance(b, str) else b
    return hmac.compare_digest(left, right)


# Prefixes vendors put on the keys they issue: safe to show, and they say whose key it is.
# Anything else (a prefix a human typed, "Acme_…") is not shown.
VENDOR_KEY_PREFIXES = ("whsec_", "hk_test_", "hk_", "sk_", "pk_", "re_", "SG.", "key-")
PASSWORD_MASK = "********"


def mask(secret: str) -> str:
    """An issued key as its vendor prefix and last 4: ``sk_live_abcdef9f2c`` →
    ``sk_…9f2c``, ``Acme_Winter2024`` → ``…2024``; short secrets show nothing.

    Use ``mask_password`` for anything a human chose: its end is no safer than its start.
    """
    if len(secret) < 12:
        return "…" + "*" * 4
    head = next((p for p in VENDOR_KEY_PREFIXES if secret.startswith(p)), "")
    if head == "hk_test_":
        head = "hk_"
    return f"{head}…{secret[-4:]}"


def mask_password(_secret: str) -> str:
    """A human-chosen secret (a mail server's or a basic-auth password) is shown as a
    fixed mask: nothing of its length, its start or its end."""
    return PASSWORD_MASK


# Console passwords (docs/architecture.md, "The console"): Argon2id with argon2-cffi's
# defaults (RFC 9106's second recommendation), verified off the event loop by the caller.
_PASSWORDS = PasswordHasher()
# Verified against when an email is unknown, so a miss costs what a wrong password does:
# the hash of "homing-console-no-such-user" under the hasher's parameters, written out
# rather than computed at import (an Argon2id hash is ~0.2 s of CPU and 64 MiB, paid by
# every process that imports this module: each worker, each CLI command).
# tests/unit/test_crypto.py holds its parameters to the hasher's.
DUMMY_PASSWORD_HASH = (
    "$argon2id$v=19$m=65536,t=3,p=4$Z5/bepGxmAwrOVwgn7INbA"
    "$3viCYO0cmXhsdUpuT1qIsmwQpyZlBS7GiNeGWHZTjtg"
)


def hash_password(password: str) -> str:
    """The Argon2id hash of a console password (salted, parameters included)."""
    return _PASSWORDS.hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches the stored Argon2id hash; ``None`` (no such user)
    is checked against a fixed hash so that it takes as long and answers False."""
    try:
        return _PASSWORDS.verify(stored or DUMMY_PASSWORD_HASH, password) and stored is not None
    except (VerifyMismatchError, InvalidHashError):
        return False


def hash_token(token: str) -> str:
    """How a console session token is stored: its SHA-256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_token(session_token: str) -> str:
    """The CSRF token of a session: an HMAC keyed by the session's own token, so it is
    never stored, differs per session and cannot be computed from the stored hash."""
    return hmac.new(session_token.encode(), b"homing:console:csrf", hashlib.sha256).hexdigest()
