"""Secrets at rest (DESIGN §5).

- ``Sealer``: AES-256-GCM with a key id; the associated data binds each ciphertext
  to its table, row and field, so a ciphertext copied elsewhere does not open.
- API keys: high-entropy ``hk_…`` tokens stored as SHA-256, compared in constant time.
- ``mask``: the only place a plaintext secret is shown again, as ``sk_…9f2c``.
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

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from homing.errors import ConfigError, DecryptionError

_FORMAT = "v1"
API_KEY_PREFIX = "hk_"
TEST_API_KEY_PREFIX = "hk_test_"


@dataclass(frozen=True, slots=True)
class MasterKey:
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

    def key_id_of(self, sealed: str) -> str:
        return sealed.split(":")[1]


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


def mask(secret: str) -> str:
    """``sk_live_abcdef9f2c`` → ``sk_…9f2c``; short secrets show nothing of themselves."""
    if len(secret) < 12:
        return "…" + "*" * 4
    head = secret.split("_", 1)[0] + "_" if "_" in secret[:8] else secret[:2]
    return f"{head}…{secret[-4:]}"
