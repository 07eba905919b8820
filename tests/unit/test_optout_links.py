"""The recipient links' tokens (``homing.managers.optout_links``): a claim comes back
as it went in, under the current key or a previous one after a rotation, never under
another deployment's key; the address ref is stable per (tenant, channel, address) and
differs across tenants."""

from __future__ import annotations

from homing.crypto import MasterKey, Sealer, generate_master_key
from homing.managers.optout_links import MAX_TOKEN, LinkClaim, LinkPurpose, OptOutLinks

OLD, NEW = MasterKey.from_b64(generate_master_key()), MasterKey.from_b64(generate_master_key())
CLAIM = LinkClaim("t" * 36, "email", "c" * 64, "r" * 36)


def test_the_longest_claim_fits_the_bound_and_comes_back_whole() -> None:
    links = OptOutLinks(Sealer(NEW))
    token = links.issue(LinkPurpose.UNSUBSCRIBE, CLAIM)
    assert len(token) <= MAX_TOKEN
    assert links.read(LinkPurpose.UNSUBSCRIBE, token) == CLAIM


def test_a_link_made_before_a_rotation_opens_while_the_old_key_is_known() -> None:
    token = OptOutLinks(Sealer(OLD)).issue(LinkPurpose.PREFERENCES, CLAIM)
    assert OptOutLinks(Sealer(NEW, [OLD])).read(LinkPurpose.PREFERENCES, token) == CLAIM
    assert OptOutLinks(Sealer(NEW)).read(LinkPurpose.PREFERENCES, token) is None


def test_an_address_ref_is_stable_per_tenant_and_channel_and_hides_the_address() -> None:
    links = OptOutLinks(Sealer(NEW))
    ref = links.address_ref("t1", "email", "ada@example.com")
    assert ref == links.address_ref("t1", "email", "ada@example.com")
    assert ref != links.address_ref("t2", "email", "ada@example.com")
    assert ref != links.address_ref("t1", "sms", "ada@example.com")
    assert ref != OptOutLinks(Sealer(OLD)).address_ref("t1", "email", "ada@example.com")
    # 32 hex characters and nothing else: no part of the address (not "ada", which is
    # itself hex and turns up in a random ref about once in 150 keys).
    assert len(ref) == 32 and set(ref) <= set("0123456789abcdef")
    assert "@" not in ref and "example" not in ref


def test_the_form_token_belongs_to_its_link() -> None:
    links = OptOutLinks(Sealer(NEW))
    first = links.issue(LinkPurpose.PREFERENCES, CLAIM)
    second = links.issue(LinkPurpose.PREFERENCES, CLAIM)
    assert links.form_token(first) == links.form_token(first)
    assert links.form_token(first) != links.form_token(second)
