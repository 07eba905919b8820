"""The extra header fields an email job may carry, and the rules they keep.

An email job's payload may hold ``"headers": [[name, value], ...]``: header fields
Homing puts on the message through each vendor's own header mechanism (an object or an
array of fields in the API's body, prefixed form fields, or the message itself), so the
vendor's DKIM signature covers them (RFC 8058 §4 asks that of ``List-Unsubscribe`` and
``List-Unsubscribe-Post``). The public API does not take them (docs/sending.md, "Header
fields"): Homing writes them itself.

The rules, each checked in time linear in the input and before anything is sent:

- at most ``MAX_HEADERS`` fields, names unique ignoring case (some vendors take an
  object, and one of them refuses duplicate keys);
- a name is an RFC 5322 field name (printable US-ASCII but ``:``), at most ``MAX_NAME``
  characters; a value is printable US-ASCII, space and tab (no CR, LF or NUL, so no
  header injection and no folding done by hand), at most ``MAX_VALUE`` characters; all
  names and values together at most ``MAX_TOTAL`` characters (one vendor takes 16 kB of
  prefixed form fields in all);
- no field Homing or a vendor owns (``OWNED``, ``OWNED_PREFIXES``, and each vendor
  descriptor's ``owned_headers``): the addresses, the subject, the date, the ids, the
  MIME structure, signatures and trace fields.

``unstructured`` writes a field of tenant text Homing owns (the subject, in a message
Homing writes whole) in printable US-ASCII itself, RFC 2047 encoded words where needed,
rather than leaving the standard library to parse the text: Python's ``email`` package
decodes encoded words in a value it is given and, before the CVE-2024-6923 fix (3.11.10,
3.12.5), wrote a decoded CR LF out raw, a field and a body of the tenant's own
(docs/security.md, 10h).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from typing import Final

from homing.vendors import VENDORS

Headers = tuple[tuple[str, str], ...]

MAX_HEADERS: Final = 20
MAX_NAME: Final = 76
# One line of RFC 5322 (998 characters) holds the longest name, ": " and the longest
# value, so SMTP sends each field unfolded and unencoded (Python's folder would turn an
# unbreakable long URL into RFC 2047 encoded words, which List-Unsubscribe must not be).
MAX_VALUE: Final = 900
MAX_TOTAL: Final = 8_000

# RFC 5322 §3.6.8: field-name = 1*ftext, ftext = %d33-57 / %d59-126.
_NAME: Final = re.compile(r"[!-9;-~]+")
_VALUE: Final = re.compile(r"[ -~\t]*")
# RFC 5322 §2.1.1: a line is at most 998 characters.
MAX_LINE: Final = 998
_PLAIN: Final = re.compile(r"[ -~]*")
# RFC 2047 §2: a line holding an encoded word is at most 76 characters. 39 bytes of
# UTF-8 are 52 characters of base64, a word of 64: with "Subject: " in front, 73.
_WORD_BYTES: Final = 39

OWNED: Final = frozenset(
    {
        "from",
        "sender",
        "to",
        "cc",
        "bcc",
        "reply-to",
        "subject",
        "date",
        "message-id",
        "mime-version",
        "dkim-signature",
        "domainkey-signature",
        "authentication-results",
        "received",
        "return-path",
        *(name for vendor in VENDORS.values() for name in vendor.owned_headers),
    }
)
OWNED_PREFIXES: Final = ("content-", "resent-", "arc-", "x-homing-")


class InvalidHeaders(ValueError):
    """The email's header fields break a rule of ``homing.email_headers``."""


# The first patch release of each minor version whose ``email`` package no longer writes
# a line break decoded out of an encoded word raw (CVE-2024-6923; 3.13 shipped fixed).
# Homing encodes its own fields either way; an older interpreter is warned of at start
# (docs/deploy.md, "The Python it runs on").
PATCHED_EMAIL: Final = {(3, 11): 10, (3, 12): 5}


def email_package_patched(version: tuple[int, int, int]) -> bool:
    """Whether the interpreter ``version`` (major, minor, micro) has the header fix."""
    first = PATCHED_EMAIL.get((version[0], version[1]))
    return first is None or version[2] >= first


def email_headers(value: object) -> Headers:
    """The header fields ``value`` holds (a sequence of ``[name, value]`` pairs, as a
    job's payload stores them), checked; ``InvalidHeaders`` naming the first rule broken.
    ``None`` or empty: none."""
    if value is None:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise InvalidHeaders("headers must be a list of [name, value] pairs")
    if len(value) > MAX_HEADERS:
        raise InvalidHeaders(f"at most {MAX_HEADERS} header fields")
    fields: list[tuple[str, str]] = []
    seen: set[str] = set()
    total = 0
    for pair in value:
        name, text = _pair(pair)
        total += len(name) + len(text)
        if total > MAX_TOTAL:
            raise InvalidHeaders(f"header fields hold at most {MAX_TOTAL} characters in all")
        key = name.lower()
        if key in seen:
            raise InvalidHeaders(f"header field {name!r} appears more than once")
        if key in OWNED or key.startswith(OWNED_PREFIXES):
            raise InvalidHeaders(f"header field {name!r} is set by Homing or the vendor")
        seen.add(key)
        fields.append((name, text))
    return tuple(fields)


def _pair(pair: object) -> tuple[str, str]:
    if not isinstance(pair, Sequence) or isinstance(pair, str | bytes) or len(pair) != 2:
        raise InvalidHeaders("each header field is a [name, value] pair")
    name, text = pair
    if not isinstance(name, str) or not isinstance(text, str):
        raise InvalidHeaders("a header field's name and value are strings")
    if not 0 < len(name) <= MAX_NAME or not _NAME.fullmatch(name):
        raise InvalidHeaders(
            f"a header field name is 1 to {MAX_NAME} printable US-ASCII characters but ':'"
        )
    if len(text) > MAX_VALUE or not _VALUE.fullmatch(text):
        raise InvalidHeaders(
            f"a header field value is at most {MAX_VALUE} printable US-ASCII characters,"
            " spaces or tabs (no CR, LF or NUL)"
        )
    return name, text


def as_payload(headers: Headers) -> list[list[str]]:
    """``headers`` as a job's payload stores them (JSON: a list of two-item lists)."""
    return [[name, text] for name, text in headers]


def unstructured(name: str, text: str) -> str:
    """The value of the unstructured field ``name`` (RFC 5322 §3.2.5) that shows
    ``text`` exactly: printable US-ASCII on one line when ``text`` is that, holds no
    ``=?`` (which a reader would decode) and fits; otherwise UTF-8 base64 encoded words
    (RFC 2047), whole characters in each, one a line, folded with CRLF and a space
    (which a reader removes between encoded words, RFC 2047 §6.2). The result holds no
    CR or LF but those folds, each followed by a space; linear in ``text``."""
    if _PLAIN.fullmatch(text) and "=?" not in text and len(name) + 2 + len(text) <= MAX_LINE:
        return text
    words: list[str] = []
    chunk = bytearray()
    for character in text:
        # "replace": a lone surrogate (JSON may carry one) becomes "?", never an error.
        data = character.encode("utf-8", "replace")
        if len(chunk) + len(data) > _WORD_BYTES:
            words.append(_encoded_word(chunk))
            chunk.clear()
        chunk += data
    words.append(_encoded_word(chunk))
    return "\r\n ".join(words)


def _encoded_word(data: bytes | bytearray) -> str:
    return f"=?utf-8?b?{base64.b64encode(data).decode('ascii')}?="
