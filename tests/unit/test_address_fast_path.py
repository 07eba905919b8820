"""homing.addresses takes its short ways (no standard-library cross-check for a plain
mailbox, no IDNA tables for a plain domain, no per-character scan of printable ASCII)
only where the long way would have answered the same."""

from __future__ import annotations

import unicodedata
from email.headerregistry import Address, AddressHeader
from typing import Any

import idna
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from homing.addresses import (
    _NEVER,
    InvalidAddress,
    _cross_check,
    _ldh,
    _plain,
    canonical,
    parse_mailbox,
)

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
word = st.text(LETTERS, min_size=1, max_size=8)
atom = st.text(LETTERS + "_+-", min_size=1, max_size=8)
label = st.text(LETTERS.lower() + "-", min_size=1, max_size=10)
plain = st.builds(
    lambda name, local, labels, tld: (
        f"{' '.join(name)} <{'.'.join(local)}@{'.'.join(labels)}.{tld}>"
        if name
        else f"{'.'.join(local)}@{'.'.join(labels)}.{tld}"
    ),
    st.lists(word, max_size=3),
    st.lists(atom, min_size=1, max_size=3),
    st.lists(label, min_size=1, max_size=3),
    st.text("abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=4),
)
# Anything at all from the characters a header parser cares about.
hostile = st.text(LETTERS[:6] + " .@<>\"'\\(),;:[]_+-=?!#%&*/{}|~`^\t\u00e9\u00a0", max_size=40)


def _agrees(value: str) -> None:
    try:
        mailbox = parse_mailbox(value)
    except InvalidAddress:
        return
    if _plain(mailbox):
        _cross_check(mailbox)  # raises when the standard library reads it otherwise


@settings(deadline=None)  # the long way is slow on a busy machine, not wrong
@given(plain)
def test_every_plain_mailbox_passes_the_standard_librarys_check(value: str) -> None:
    _agrees(value)


@settings(deadline=None)
@given(hostile)
def test_a_mailbox_that_skips_the_check_would_have_passed_it(value: str) -> None:
    _agrees(value)


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    original = AddressHeader.parse.__func__  # type: ignore[attr-defined]

    def parse(cls: Any, value: str, kwds: dict[str, Any]) -> None:
        seen.append(value)
        original(cls, value, kwds)

    monkeypatch.setattr(AddressHeader, "parse", classmethod(parse))
    return seen


def test_a_plain_mailbox_is_not_parsed_again_by_the_standard_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _parses(monkeypatch)
    assert canonical("Ada Lovelace <Ada.L+x@Example.COM>") == "Ada Lovelace <Ada.L+x@example.com>"
    assert canonical("ada@xn--bcher-kva.de") == "ada@xn--bcher-kva.de"
    assert seen == []


@pytest.mark.parametrize(
    "value",
    [
        '"Lovelace, Ada" <ada@example.com>',
        "John Q. Public <j@example.com>",
        "Zoë <z@example.com>",
        "o'brien@example.com",
        "a=b@example.com",
    ],
)
def test_any_other_mailbox_is_still_cross_checked(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    seen = _parses(monkeypatch)
    parse_mailbox(value)
    assert len(seen) == 1


domain_text = st.text("abcXYZ019-.\u212a\u00fc", min_size=1, max_size=30) | st.builds(
    lambda a, b: f"{a}.{b}", st.sampled_from(["xn--bcher-kva", "xn--a", "ab--c", "-a", "a-"]), word
)


@settings(deadline=None)
@given(domain_text)
def test_a_plain_domain_is_what_idna_makes_of_it(domain: str) -> None:
    fast = _ldh(domain)
    if fast is None:
        return
    assert fast == idna.encode(domain, uts46=True).decode("ascii").lower()


def test_printable_ascii_is_exactly_the_ascii_with_no_refused_character() -> None:
    for code in range(128):
        ch = chr(code)
        assert ch.isprintable() == (unicodedata.category(ch) not in _NEVER), repr(ch)


@settings(deadline=None)
@given(plain | hostile)
def test_the_canonical_form_reads_back_as_the_same_mailbox(value: str) -> None:
    """So the key read with ``to`` (what the API hands the store) is the key the store
    would read from the canonical ``to`` it stores."""
    try:
        mailbox = parse_mailbox(value)
    except InvalidAddress:
        return
    assert parse_mailbox(str(mailbox)) == mailbox


@settings(deadline=None)
@given(plain | hostile)
def test_a_plain_mailbox_is_written_as_the_standard_library_writes_it(value: str) -> None:
    try:
        mailbox = parse_mailbox(value)
    except InvalidAddress:
        return
    written = Address(mailbox.display_name, mailbox.local, mailbox.domain)
    assert str(mailbox) == str(written)
