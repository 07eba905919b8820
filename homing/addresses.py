"""Email addresses, parsed once: exactly one mailbox, in one canonical form.

Every part of Homing that looks at an address (the API's validation, suppression, the
sending-domain rule, pacing, every email adapter and the mail envelope) goes through
``parse_mailbox``, so they cannot disagree about who a message is for. A value is one
mailbox, ``local@domain`` or ``Display Name <local@domain>``, and nothing else:

- bounded first (``MAX_MAILBOX`` characters), then checked in one linear pass: no
  control, separator or format character (CR, LF, NUL, U+2028, U+202E, …), no RFC
  2047 encoded word (``=?…?=``: the API takes Unicode as it is), no comment, group,
  list or route syntax (``(``, ``)``, ``,``, ``;``, ``:``), no domain literal, no
  quoted local part;
- the display name is a plain phrase or one quoted string, at most ``MAX_NAME``
  characters; an unquoted name holding ``@`` or ``<`` (``decoy@x.com <s@y.com>``) is
  refused rather than guessed at;
- the local part is an ASCII dot-atom of at most 64 characters, kept as given; the
  domain is checked with IDNA (UTS #46) and kept as lower-case ASCII (A-labels); an
  ASCII domain of plain LDH labels is lower-cased without IDNA's tables, which answer
  exactly that for it;
- the result is cross-checked with the standard library's strict header parser
  (``email.headerregistry``): it must see the same single mailbox, with no defect.
  A *plain* mailbox (ASCII letters, digits and single spaces in the name; letters,
  digits, ``.``, ``_``, ``+`` and ``-`` in the local part; a lower-case LDH domain)
  holds nothing that parser could read otherwise, and skips it: that check is three
  quarters of a parse, and most addresses are plain
  (``tests/unit/test_address_fast_path.py`` holds the parser to that).

``Mailbox.key`` is what addresses are compared by (suppression, pacing): the whole
address in lower case. Only the domain is case-insensitive by the RFCs, but no
mainstream mailbox treats ``Ada@`` and ``ada@`` as two people, and for suppression the
safe error is to suppress too much, never too little.
"""

from __future__ import annotations

import string
import unicodedata
from dataclasses import dataclass
from email.errors import HeaderParseError, MessageError
from email.headerregistry import Address, HeaderRegistry
from typing import Final

import idna
import phonenumbers

__all__ = [
    "MAX_MAILBOX",
    "MAX_PHONE",
    "InvalidAddress",
    "InvalidPhoneNumber",
    "Mailbox",
    "address_key",
    "canonical",
    "parse_mailbox",
    "phone_key",
    "sms_sender",
]

MAX_MAILBOX: Final = 400
MAX_NAME: Final = 200
_MAX_LOCAL: Final = 64
_MAX_DOMAIN: Final = 253
_ATEXT: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~"
)
_DOT_ATEXT: Final = _ATEXT | {"."}
# Outside a quoted string these end or nest a mailbox: never one mailbox's business.
_NEVER_OUTSIDE_QUOTES: Final = frozenset("(),;:[]\\")
# The class of a ``To:`` header, made once: ``HeaderRegistry()("to", …)`` builds a new
# class on every call.
_TO_HEADER: Final = HeaderRegistry()["to"]
# A plain mailbox's characters: nothing in them quotes, comments, groups or encodes.
_PLAIN_NAME: Final = frozenset(string.ascii_letters + string.digits + " ")
_PLAIN_LOCAL: Final = frozenset(string.ascii_letters + string.digits + "._+-")
_PLAIN_DOMAIN: Final = frozenset(string.ascii_lowercase + string.digits + ".-")
_LDH: Final = frozenset(string.ascii_lowercase + string.digits + "-")
_MAX_LABEL: Final = 63
# Control characters (CR, LF, NUL, NEL, …), line and paragraph separators, and format
# characters (bidirectional overrides, zero-width joiners): nothing a name needs to show.
_NEVER: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


class InvalidAddress(ValueError):
    """Not exactly one email address, e.g. a@example.com or Name <a@example.com>."""


@dataclass(frozen=True, slots=True)
class Mailbox:
    """One parsed mailbox: ``local`` as given, ``domain`` lower-case ASCII."""

    display_name: str
    local: str
    domain: str

    @property
    def address(self) -> str:
        """The bare address, ``local@domain``: what a mail envelope carries (RFC 5321)."""
        return f"{self.local}@{self.domain}"

    @property
    def key(self) -> str:
        """What two addresses are compared by (suppression, pacing)."""
        return self.address.lower()

    def __str__(self) -> str:
        """The canonical form: stored on the job and sent to every provider."""
        if _plain(self):  # nothing to quote: what ``Address`` would write
            name = self.display_name
            return f"{name} <{self.address}>" if name else self.address
        return str(Address(self.display_name, self.local, self.domain))


def parse_mailbox(value: str) -> Mailbox:
    """The one mailbox ``value`` names, or InvalidAddress (a ValueError)."""
    if len(value) > MAX_MAILBOX:
        raise InvalidAddress(f"an address is at most {MAX_MAILBOX} characters")
    # Printable ASCII holds none of them: only other text is looked at character by character.
    plain_text = value.isascii() and value.isprintable()
    if not plain_text and any(unicodedata.category(ch) in _NEVER for ch in value):
        raise InvalidAddress(
            "an address must not contain line breaks, control or invisible format characters"
        )
    if "=?" in value:
        raise InvalidAddress("an address must not contain encoded words (=?…?=)")
    name, spec = _split(value.strip())
    local, domain = _addr_spec(spec)
    mailbox = Mailbox(_display_name(name), local, _domain(domain))
    if not _plain(mailbox):
        _cross_check(mailbox)
    return mailbox


def canonical(value: str) -> str:
    """The canonical form of the one mailbox ``value`` names; InvalidAddress otherwise."""
    return str(parse_mailbox(value))


def address_key(value: str) -> str:
    """The comparison key of an address that was stored or reported rather than sent
    to the API now (a suppression, a provider's event, a job accepted before this
    parser): ``Mailbox.key`` when it parses, else the whole value in lower case, which
    matches no key of a well-formed address (and such a job is refused at send)."""
    try:
        return parse_mailbox(value).key
    except InvalidAddress:
        return value.strip().lower()


def _refused(why: str) -> InvalidAddress:
    return InvalidAddress(f"must be one email address ({why}), e.g. Name <a@example.com>")


def _split(text: str) -> tuple[str, str]:
    """(display name, addr-spec) of ``name <spec>`` or a bare ``spec``, in one pass."""
    outside = _outside_quotes(text)
    special = next((ch for _, ch in outside if ch in _NEVER_OUTSIDE_QUOTES), None)
    if special is not None:
        raise _refused(f"{special!r} outside a quoted name")
    opening = [i for i, ch in outside if ch == "<"]
    closing = [i for i, ch in outside if ch == ">"]
    if not opening and not closing:
        if '"' in text:
            raise _refused("a quoted name without <…>")
        return "", text
    if len(opening) != 1 or closing != [len(text) - 1]:
        raise _refused("not one <…> at the end")
    spec = text[opening[0] + 1 : -1]
    if '"' in spec:
        raise _refused("a quote inside <…>")
    return text[: opening[0]].strip(), spec


def _outside_quotes(text: str) -> list[tuple[int, str]]:
    """The characters of ``text`` outside quoted strings, with their positions."""
    if '"' not in text:  # nothing is quoted (a backslash escapes only inside quotes)
        return list(enumerate(text))
    found: list[tuple[int, str]] = []
    quoted = escaped = False
    for index, ch in enumerate(text):
        if escaped:
            escaped = False
        elif quoted and ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif not quoted:
            found.append((index, ch))
    if quoted:
        raise _refused("an unterminated quote")
    return found


def _addr_spec(spec: str) -> tuple[str, str]:
    local, at, domain = spec.rpartition("@")
    if not at or not local or not domain:
        raise _refused("no local@domain")
    if "@" in local or len(local) > _MAX_LOCAL:
        raise _refused("the part before '@' is not a plain name of at most 64 characters")
    if local.startswith(".") or local.endswith(".") or ".." in local:
        raise _refused("a misplaced '.' before '@'")
    # ASCII only: a non-ASCII local part needs SMTPUTF8, which few providers accept.
    if not _DOT_ATEXT.issuperset(local):
        raise _refused("a character not allowed before '@'")
    return local, domain


def _domain(domain: str) -> str:
    if len(domain) > _MAX_DOMAIN or domain.endswith(".") or "." not in domain:
        raise _refused("the domain is not a full domain name")
    ascii_domain = _ldh(domain)
    if ascii_domain is None:
        try:
            ascii_domain = idna.encode(domain, uts46=True).decode("ascii").lower()
        except (idna.IDNAError, UnicodeError):
            raise _refused("the domain is not a valid (IDNA) domain name") from None
    if ascii_domain.rpartition(".")[2].isdigit():
        raise _refused("the domain is an IP address")
    return ascii_domain


def _ldh(domain: str) -> str | None:
    """The domain in lower case when it is ASCII letters, digits and hyphens in labels
    IDNA takes as they are (1 to 63 characters, no hyphen first, last or third and
    fourth, so no A-label to decode): what ``idna.encode`` answers for it, without its
    tables. None for any other domain, which ``idna`` checks."""
    if not domain.isascii():
        return None
    lowered = domain.lower()
    for label in lowered.split("."):
        if not (0 < len(label) <= _MAX_LABEL and _LDH.issuperset(label)):
            return None
        if label[0] == "-" or label[-1] == "-" or label[2:4] == "--":
            return None
    return lowered


def _display_name(name: str) -> str:
    if name.startswith('"'):
        if not name.endswith('"') or len(name) < 2:
            raise _refused("text outside the quoted name")
        inner = name[1:-1]
        if _has_unescaped_quote(inner):
            raise _refused("text outside the quoted name")
        name = _unescape(inner)
    elif '"' in name or "@" in name or "<" in name or ">" in name:
        raise _refused("a name with '@', '<' or a quote must be quoted")
    if len(name) > MAX_NAME:
        raise InvalidAddress(f"a display name is at most {MAX_NAME} characters")
    return " ".join(name.split())


def _has_unescaped_quote(text: str) -> bool:
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            return True
    return False


def _unescape(text: str) -> str:
    out: list[str] = []
    escaped = False
    for ch in text:
        if not escaped and ch == "\\":
            escaped = True
            continue
        escaped = False
        out.append(ch)
    return "".join(out)


def _plain(mailbox: Mailbox) -> bool:
    """Whether the mailbox, as ``parse_mailbox`` leaves it (a dot-atom local part, an
    IDNA-checked domain, a name of words and single spaces), is made only of characters
    the standard library's parser reads as we do: it reads such a one back unchanged."""
    return (
        _PLAIN_LOCAL.issuperset(mailbox.local)
        and _PLAIN_DOMAIN.issuperset(mailbox.domain)
        and _PLAIN_NAME.issuperset(mailbox.display_name)
    )


def _cross_check(mailbox: Mailbox) -> None:
    """The standard library's strict parser must read the canonical form back as this
    one mailbox, with no defect."""
    try:
        header = _TO_HEADER("to", str(mailbox))
    except (HeaderParseError, MessageError, ValueError, IndexError):
        raise _refused("it does not parse") from None
    parsed = header.addresses  # type: ignore[attr-defined]
    groups = header.groups  # type: ignore[attr-defined]
    if header.defects or len(groups) != 1 or groups[0].display_name is not None:
        raise _refused("it does not parse as one mailbox")
    if len(parsed) != 1:
        raise _refused("it names more than one mailbox")
    found = parsed[0]
    if (found.display_name, found.username, found.domain) != (
        mailbox.display_name,
        mailbox.local,
        mailbox.domain,
    ):
        raise _refused("it does not parse the same way twice")


# Phone numbers (the SMS channel) --------------------------------------------------------
#
# A number is given in international form (``+`` and the country code; there is no
# default region to guess from) and kept in E.164 (``+14155552671``): the one form that
# is stored, sent, suppressed and compared. The text is bounded and checked in one pass
# over its characters before ``phonenumbers`` sees it, so a hostile 10 MB "number" costs
# a length comparison.

MAX_PHONE: Final = 32
_PHONE_CHARS: Final = frozenset("+0123456789 -().")
# An alphanumeric sender ID: up to 11 letters, digits and spaces, at least one letter
# (Twilio and Vonage both take them where the destination country allows).
_MAX_SENDER_ID: Final = 11
_SENDER_ID_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
)


class InvalidPhoneNumber(ValueError):
    """Not a phone number in international form, e.g. +14155552671."""


def phone_key(value: str) -> str:
    """The E.164 form of the phone number ``value`` names, or InvalidPhoneNumber."""
    if len(value) > MAX_PHONE:
        raise InvalidPhoneNumber(f"a phone number is at most {MAX_PHONE} characters")
    text = value.strip()
    if not text.startswith("+") or not set(text) <= _PHONE_CHARS or "+" in text[1:]:
        raise InvalidPhoneNumber(
            "a phone number is written in international form: + and the country code, "
            "then digits (spaces, dots, dashes and brackets allowed), e.g. +14155552671"
        )
    try:
        number = phonenumbers.parse(text, None)
    except phonenumbers.NumberParseException:
        raise InvalidPhoneNumber("the phone number cannot be read") from None
    if not phonenumbers.is_valid_number(number):
        raise InvalidPhoneNumber("this is not a valid phone number for its country code")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def sms_sender(value: str) -> str:
    """An SMS sender: a phone number (made E.164) or an alphanumeric sender ID of at
    most 11 letters, digits and spaces with at least one letter; InvalidPhoneNumber
    otherwise."""
    if len(value) > MAX_PHONE:
        raise InvalidPhoneNumber(f"'from' is at most {MAX_PHONE} characters")
    text = value.strip(" ")
    if text.startswith("+"):
        return phone_key(text)
    if not 0 < len(text) <= _MAX_SENDER_ID or not set(text) <= _SENDER_ID_CHARS:
        raise InvalidPhoneNumber(
            "'from' is a phone number (+14155552671) or a sender ID of 1 to 11 letters, "
            "digits and spaces"
        )
    if not any(ch.isalpha() for ch in text):
        raise InvalidPhoneNumber("a sender ID needs at least one letter")
    return text
