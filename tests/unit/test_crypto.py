"""Sealing secrets, API keys and masking."""

from __future__ import annotations

import pytest
from argon2 import PasswordHasher

from homing.crypto import (
    DUMMY_PASSWORD_HASH,
    MasterKey,
    Sealer,
    api_key_display_prefix,
    constant_time_equals,
    generate_api_key,
    generate_master_key,
    hash_api_key,
    hash_password,
    load_or_create_key_file,
    mask,
    verify_password,
)
from homing.errors import ConfigError, DecryptionError

WHERE = {"table": "provider_accounts", "row_id": "row-1", "field": "credentials"}


def test_sealed_value_opens_only_for_its_row_and_field() -> None:
    sealer = Sealer(MasterKey.from_b64(generate_master_key()))
    sealed = sealer.seal(b"sk_live_secret", **WHERE)
    assert b"sk_live_secret" not in sealed.encode()
    assert sealer.open(sealed, **WHERE) == b"sk_live_secret"
    with pytest.raises(DecryptionError):
        sealer.open(sealed, **{**WHERE, "row_id": "row-2"})
    with pytest.raises(DecryptionError):
        sealer.open(sealed, **{**WHERE, "field": "other"})


def test_each_seal_uses_a_fresh_nonce() -> None:
    sealer = Sealer(MasterKey.from_b64(generate_master_key()))
    assert sealer.seal(b"x", **WHERE) != sealer.seal(b"x", **WHERE)


def test_rotated_key_still_opens_old_ciphertexts_and_seals_with_the_new() -> None:
    old = MasterKey.from_b64(generate_master_key())
    new = MasterKey.from_b64(generate_master_key())
    sealed_old = Sealer(old).seal(b"secret", **WHERE)
    rotated = Sealer(new, [old])
    assert rotated.open(sealed_old, **WHERE) == b"secret"
    assert rotated.key_id_of(rotated.seal(b"secret", **WHERE)) == new.key_id
    with pytest.raises(DecryptionError):
        Sealer(new).open(sealed_old, **WHERE)


def test_tampered_ciphertext_does_not_open() -> None:
    sealer = Sealer(MasterKey.from_b64(generate_master_key()))
    sealed = sealer.seal(b"secret", **WHERE)
    head, last = sealed[:-2], sealed[-2:]
    flipped = head + ("A" if last[0] != "A" else "B") + last[1]
    with pytest.raises(DecryptionError):
        sealer.open(flipped, **WHERE)


@pytest.mark.parametrize("bad", ["not base64!!", "c2hvcnQ="])
def test_master_key_must_be_32_bytes_of_base64(bad: str) -> None:
    with pytest.raises(ConfigError):
        MasterKey.from_b64(bad)


def test_master_key_repr_shows_only_its_id() -> None:
    key = MasterKey.from_b64(generate_master_key())
    assert repr(key) == f"MasterKey(key_id={key.key_id!r})"


def test_key_file_is_created_once_with_mode_0600(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    first, created = load_or_create_key_file(tmp_path / "data")
    again, created_again = load_or_create_key_file(tmp_path / "data")
    assert created and not created_again and first == again
    assert (tmp_path / "data" / "secret.key").stat().st_mode & 0o777 == 0o600


def test_api_keys_are_random_hashed_and_recognisable() -> None:
    key = generate_api_key()
    assert key.startswith("hk_") and len(key) > 40
    assert generate_api_key(test=True).startswith("hk_test_")
    assert hash_api_key(key) != key and len(hash_api_key(key)) == 64
    assert api_key_display_prefix(key) == key[:7]
    assert generate_api_key() != key


def test_mask_keeps_only_a_hint() -> None:
    assert mask("sk_live_abcdef123456789f2c") == "sk_…9f2c"
    assert mask("short") == "…****"
    assert "abcdef" not in mask("re_abcdefghijklmnop")


def test_constant_time_equals() -> None:
    assert constant_time_equals("abc", "abc")
    assert not constant_time_equals("abc", "abd")
    assert constant_time_equals(b"x", "x")


def test_an_unknown_email_is_verified_against_a_hash_with_a_real_ones_parameters() -> None:
    """The written-out dummy hash costs what a user's does: the same Argon2id
    parameters as the hasher's (else a miss would answer faster, and tell), and it is
    the hash of its fixed phrase, so it never matches a typed password by accident."""
    hasher = PasswordHasher()
    assert not hasher.check_needs_rehash(DUMMY_PASSWORD_HASH)
    assert not hasher.check_needs_rehash(hash_password("x"))
    assert hasher.verify(DUMMY_PASSWORD_HASH, "homing-console-no-such-user")
    assert not verify_password(None, "homing-console-no-such-user")
    assert verify_password(hash_password("correct horse"), "correct horse")
    assert not verify_password(hash_password("correct horse"), "wrong")
