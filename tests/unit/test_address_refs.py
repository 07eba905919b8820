"""The keyed hash an erased address's suppression and an address's opt-out are kept
as (``homing.crypto.AddressRefs``): one function for both, bound to tenant and
channel, under the master key, and showing nothing of the address."""

from __future__ import annotations

from homing.crypto import AddressRefs, MasterKey, Sealer, generate_master_key
from homing.managers.optout_links import OptOutLinks


def _sealer() -> Sealer:
    return Sealer(MasterKey.from_b64(generate_master_key()))


def test_a_suppression_hash_is_the_opt_out_ref_of_the_same_address() -> None:
    sealer = _sealer()
    refs = AddressRefs.of(sealer)
    ref = OptOutLinks(sealer).address_ref("tenant-a", "email", "ada@example.com")
    assert refs.ref("tenant-a", "email", "ada@example.com") == ref
    assert refs.hashed("tenant-a", "email", "ada@example.com") == "#" + ref
    # Hex only ("ada" is itself hex, so a random ref may hold it): nothing of the address.
    assert len(ref) == 32 and set(ref) <= set("0123456789abcdef")


def test_the_hash_differs_by_tenant_channel_address_and_master_key() -> None:
    refs = AddressRefs.of(_sealer())
    seen = {
        refs.hashed("tenant-a", "email", "ada@example.com"),
        refs.hashed("tenant-b", "email", "ada@example.com"),
        refs.hashed("tenant-a", "sms", "ada@example.com"),
        refs.hashed("tenant-a", "email", "bob@example.com"),
        AddressRefs.of(_sealer()).hashed("tenant-a", "email", "ada@example.com"),
    }
    assert len(seen) == 5
    assert repr(refs) == "AddressRefs()"


def test_after_a_rotation_an_address_is_matched_under_every_key_the_current_first() -> None:
    old = MasterKey.from_b64(generate_master_key())
    before = AddressRefs.of(Sealer(old))
    after = AddressRefs.of(Sealer(MasterKey.from_b64(generate_master_key()), [old]))
    address = ("tenant-a", "email", "ada@example.com")
    assert before.hashed_forms(*address) == (before.hashed(*address),)
    assert before.refs(*address) == (before.ref(*address),)
    assert after.hashed_forms(*address) == (after.hashed(*address), before.hashed(*address))
    assert after.refs(*address) == (after.ref(*address), before.ref(*address))
    assert OptOutLinks(Sealer(old)).address_refs(*address) == before.refs(*address)
