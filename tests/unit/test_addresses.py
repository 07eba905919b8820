"""homing.addresses: one mailbox, one canonical form, one comparison key."""

from __future__ import annotations

import pytest

from homing.addresses import InvalidAddress, address_key, canonical, parse_mailbox


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("ada@example.com", "ada@example.com"),
        ("Ada@EXAMPLE.com", "Ada@example.com"),
        ("<ada@example.com>", "ada@example.com"),
        ("Ada Lovelace <ada@example.com>", "Ada Lovelace <ada@example.com>"),
        ('"Lovelace, Ada" <ada@example.com>', '"Lovelace, Ada" <ada@example.com>'),
        ("John Q. Public <j@example.com>", '"John Q. Public" <j@example.com>'),
        ("ada@bücher.de", "ada@xn--bcher-kva.de"),
        ("  ada+tag@example.co.uk ", "ada+tag@example.co.uk"),
        ("Ada\u00a0 Lovelace <ada@example.com>", "Ada Lovelace <ada@example.com>"),
    ],
)
def test_one_mailbox_has_one_canonical_form(given: str, expected: str) -> None:
    assert canonical(given) == expected
    assert canonical(expected) == expected


@pytest.mark.parametrize(
    "given",
    [
        "",
        "a@b",
        "a@x.com.",
        "a..b@x.com",
        "José@x.com",
        "Ada <a@x.com> <b@y.com>",
        'Ada "L" <a@x.com>',
        "ada@example.com>",
        'ad"a@x.com',
        "a@-x.com",
        "a@1.2.3.4",
        "x" * 401,
        "Ada\u202e <a@x.com>",
        "Ada\u2028 <a@x.com>",
        "a@x.com\x85",
    ],
)
def test_anything_but_one_mailbox_is_refused(given: str) -> None:
    with pytest.raises(InvalidAddress):
        parse_mailbox(given)


def test_addresses_compare_by_one_key() -> None:
    keys = {address_key(v) for v in ("S@Y.COM", "Someone <s@y.com>", "s@Y.com")}
    assert keys == {"s@y.com"}
    assert address_key("decoy@x.com <s@y.com>") == "decoy@x.com <s@y.com>"
