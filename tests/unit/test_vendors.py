"""Every vendor has every part, and lives in its own files (docs/architecture.md,
"Vendors").

The descriptors (``homing.vendors.VENDORS``) are the list: each layer's registry is
walked against it, both ways, so a vendor that lacks a part (or a part without a
vendor) fails here rather than at a tenant's first send. Outside a vendor's own files
no module spells a vendor's name in a string: they read it from the descriptor.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import homing
from homing.channels import Channel
from homing.inbound.billing import BILLING_SOURCES
from homing.inbound.sources import KINDS, SOURCES
from homing.providers.endpoints import OFFICIAL_HOSTS
from homing.providers.http_adapter import HttpAdapter
from homing.providers.registry import (
    ADAPTERS,
    CHAT_PROVIDERS,
    EMAIL_PROVIDERS,
    SMS_PROVIDERS,
)
from homing.sandbox.app import VENDOR_PREFIXES
from homing.vendors import VENDORS, Vendor

ROOT = Path(homing.__file__).resolve().parent
BY_CHANNEL = {
    Channel.EMAIL: EMAIL_PROVIDERS,
    Channel.SMS: SMS_PROVIDERS,
    Channel.CHAT: CHAT_PROVIDERS,
}


@pytest.mark.parametrize("name", list(VENDORS))
def test_every_vendor_has_an_adapter_of_its_channel(name: str) -> None:
    vendor = VENDORS[name]
    adapter = ADAPTERS.get(name)
    assert adapter is not None, f"{name} has no adapter in homing.providers.registry.ADAPTERS"
    assert getattr(adapter, "name", None) == name, "the adapter answers to another name"
    assert adapter.__module__ == f"homing.vendors.{name}.adapter", "the adapter lives elsewhere"
    assert BY_CHANNEL[vendor.channel].get(name) is adapter, "the adapter serves another channel"


# Chat adapters and the SMTP client have their own shape; every other vendor is an HTTP API.
HTTP_APIS = [
    name
    for name, vendor in VENDORS.items()
    if vendor.channel is not Channel.CHAT and vendor.endpoint == "base_url"
]


@pytest.mark.parametrize("name", HTTP_APIS)
def test_every_email_and_sms_api_adapter_stands_on_the_http_base(name: str) -> None:
    vendor = VENDORS[name]
    adapter = ADAPTERS[name]
    assert isinstance(adapter, type) and issubclass(adapter, HttpAdapter)
    assert adapter.default_base_url.startswith("https://")
    host = adapter.default_base_url.removeprefix("https://").split("/")[0]
    assert host in vendor.hosts, "the adapter's default API is one of its official hosts"


def test_every_adapter_is_a_vendor() -> None:
    assert set(ADAPTERS) == set(VENDORS)
    assert set(EMAIL_PROVIDERS) | set(SMS_PROVIDERS) | set(CHAT_PROVIDERS) == set(VENDORS)


@pytest.mark.parametrize("name", list(VENDORS))
def test_every_vendor_names_its_credentials_and_where_it_sends(name: str) -> None:
    vendor = VENDORS[name]
    assert vendor.required, f"{name} names no required credential"
    assert len({c.name for c in vendor.credentials}) == len(vendor.credentials)
    assert list(vendor.credentials) == sorted(vendor.credentials, key=lambda c: not c.required)
    if vendor.endpoint == "mail_server":
        assert not vendor.hosts, "a mail server is any public host: it has no official one"
    else:
        assert vendor.hosts, f"{name} has no official API host"
        assert OFFICIAL_HOSTS[name] == vendor.hosts
    if vendor.endpoint == "webhook_url":
        assert "webhook_url" in vendor.secrets, "a webhook URL is a whole credential"


@pytest.mark.parametrize("name", list(VENDORS))
def test_a_vendor_that_sends_events_has_a_verifier_and_a_parser(name: str) -> None:
    vendor = VENDORS[name]
    source = SOURCES.get(name)
    if vendor.inbound_secret is None:
        assert source is None, f"{name} has an inbound source but names no secret kind"
        return
    assert source is not None, f"{name} names a secret kind but has no inbound source"
    assert KINDS[name] == vendor.inbound_secret
    # The vendor's own modules, in its folder.
    assert source.signature.__name__ == f"homing.vendors.{name}.verify"  # type: ignore[attr-defined]
    assert source.events.__name__ == f"homing.vendors.{name}.parse"  # type: ignore[attr-defined]


def test_every_inbound_source_is_a_vendor() -> None:
    assert set(SOURCES) <= set(VENDORS)
    assert not set(SOURCES) & set(BILLING_SOURCES)


@pytest.mark.parametrize("name", list(VENDORS))
def test_a_chat_vendor_says_which_chat_ids_it_takes(name: str) -> None:
    vendor = VENDORS[name]
    assert (vendor.chat is not None) == (vendor.channel is Channel.CHAT)


@pytest.mark.parametrize("name", list(VENDORS))
def test_the_sandbox_emulates_every_vendor(name: str) -> None:
    # The sandbox keeps its own names (it must not share the adapters' assumptions):
    # it is held to the descriptors here, never by importing them.
    assert name in VENDOR_PREFIXES or (ROOT / "sandbox" / f"{name}.py").is_file()


def test_the_sandbox_imports_no_descriptor() -> None:
    wrong = [
        f"{path.relative_to(ROOT.parent)} imports {target}"
        for path in sorted((ROOT / "sandbox").rglob("*.py"))
        for target in _imports(ast.parse(path.read_text()))
        if target == "homing.vendors" or target.startswith("homing.vendors.")
    ]
    assert not wrong, wrong


def _imports(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _home(name: str) -> frozenset[str]:
    """A vendor's own files: its folder; a billing vendor's, its module in billing."""
    own = {str(p.relative_to(ROOT.parent)) for p in (ROOT / "vendors" / name).glob("*.py")}
    if name in BILLING_SOURCES:
        own.add(f"homing/inbound/billing/{name}.py")
    return frozenset(own)


def test_every_vendor_lives_in_its_own_folder() -> None:
    for name, vendor in VENDORS.items():
        module = importlib.import_module(f"homing.vendors.{name}")
        assert getattr(module, "VENDOR", None) is vendor, f"{name}'s descriptor is elsewhere"
    loose = {p.name for p in (ROOT / "vendors").glob("*.py")} - {"__init__.py", "descriptor.py"}
    assert not loose, f"a vendor's files are in its folder, homing/vendors/<name>/: {loose}"
    folders = {p.name for p in (ROOT / "vendors").iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(VENDORS), "a folder in homing/vendors/ is a vendor's, with its descriptor"


def test_every_billing_vendor_has_its_module() -> None:
    for name, source in BILLING_SOURCES.items():
        assert source.verify.__module__ == f"homing.inbound.billing.{name}"
        assert source.interpret.__module__ == f"homing.inbound.billing.{name}"


# The registries list every vendor, one line each (docs/architecture.md, "Vendors").
REGISTRIES = frozenset(
    {
        "homing/vendors/__init__.py",
        "homing/providers/registry.py",
        "homing/inbound/sources.py",
        "homing/inbound/billing/__init__.py",
    }
)
# The smtp:// scheme of HOMING_SANDBOX_URLS is a URL scheme that happens to be a
# vendor's name: these modules read or write sandbox URLs; in their strings
# ``smtp`` and ``smtp://`` name the scheme, no vendor.
SCHEME_READERS = frozenset(
    {
        "homing/providers/endpoints.py",
        "homing/dispatch/sandbox_guard.py",
        "homing/dispatch/senders.py",
        "homing/cli/runner.py",
    }
)
SCHEMES = frozenset({"smtp"})
# Names fixed outside the code that happen to hold a vendor's name, allowed wherever
# they are spelled (any case; ``-`` or ``_`` alike), each with why it stays. The chat fields
# of a recipient are their descriptors' (``ChatAddress.recipient_field``) and count too.
PUBLIC_NAMES: dict[str, str] = {
    "slack_webhook_url": "HOMING_ALERT_SLACK_WEBHOOK_URL: a setting (the operator's alerts)",
    "paystack_secret_key": "HOMING_PAYSTACK_SECRET_KEY: a setting",
    "polar_webhook_secret": "HOMING_POLAR_WEBHOOK_SECRET: a setting",
    "smtp_port": "the sandbox's SMTP sink: `homing sandbox --smtp-port`, its own name",
    "SMTP on port": "a line `homing run --demo` prints about the sandbox's SMTP sink",
    "slack alert failed": "a log line's message (the operator's alert webhook failed)",
}
RECIPIENT_FIELDS = frozenset(
    v.chat.recipient_field
    for v in VENDORS.values()
    if v.chat is not None and v.chat.recipient_field
)
_LETTERS = re.compile(r"[A-Za-z]+")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def _public(text: str) -> re.Pattern[str]:
    words = re.split(r"[-_]", text)
    return re.compile("[-_]".join(re.escape(word) for word in words), re.IGNORECASE)


PUBLIC = [_public(name) for name in (*PUBLIC_NAMES, *RECIPIENT_FIELDS)]
_SCHEME = re.compile(r"\b(?:" + "|".join(SCHEMES) + r")://")


def names_in(text: str, names: frozenset[str]) -> set[str]:
    """The vendor names ``text`` spells: as a word or words of it (``SendGridProvider``,
    ``open_smtp``, ``Twilio's``), whatever the case; not inside another word
    (``aiosmtplib``, ``resending``)."""
    for public in PUBLIC:
        text = public.sub(" ", text)
    found = set()
    for run in _LETTERS.findall(text):
        words = [w.lower() for w in _WORDS.findall(run)]
        for i in range(len(words)):
            for j in range(i + 1, len(words) + 1):
                if "".join(words[i:j]) in names:
                    found.add("".join(words[i:j]))
    return found


def _texts(tree: ast.AST) -> Iterator[tuple[int, str, str]]:
    """Every identifier, import and string of a module (docstrings too; comments are
    not in the tree): (line, kind, text)."""
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield line, "string", node.value
        elif isinstance(node, ast.Name):
            yield line, "identifier", node.id
        elif isinstance(node, ast.Attribute):
            yield line, "identifier", node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield line, "identifier", node.name
        elif isinstance(node, ast.arg):
            yield line, "identifier", node.arg
        elif isinstance(node, ast.keyword) and node.arg:
            yield line, "identifier", node.arg
        elif isinstance(node, ast.alias):
            yield line, "import", f"{node.name} {node.asname or ''}"
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield line, "import", node.module


def _namings(path: Path, names: frozenset[str]) -> Iterator[tuple[int, str, str]]:
    """(line, kind, name) of each vendor ``path`` names outside its own files."""
    relative = str(path.relative_to(ROOT.parent))
    parts = path.relative_to(ROOT).parts
    # A vendor's folder is its own text: its strings keep its wire names and sources,
    # whoever's words they hold (SendGrid's headers and documents say Twilio); its code
    # reaches into no other vendor's.
    in_a_folder = len(parts) == 3 and parts[0] == "vendors"
    for line, kind, text in _texts(ast.parse(path.read_text())):
        if kind == "string" and in_a_folder:
            continue
        if kind == "string" and relative in SCHEME_READERS:
            text = "" if text in SCHEMES else _SCHEME.sub(" ", text)
        for name in names_in(text, names):
            if relative not in _home(name):
                yield line, kind, name


def test_no_module_outside_a_vendors_home_names_it() -> None:
    # Not in an identifier, an import or a string (docstrings included; comments may):
    # the generic code reads what it needs from the descriptor (or the registry).
    names = frozenset({*VENDORS, *BILLING_SOURCES})
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = str(path.relative_to(ROOT.parent))
        if {"sandbox", "migrations"} & set(path.relative_to(ROOT).parts):
            continue  # the emulator keeps its own names; revisions are frozen copies
        if relative in REGISTRIES:
            continue
        wrong += [f"{relative}:{n} names {v!r} in {k}" for n, k, v in _namings(path, names)]
    assert not wrong, (
        "read it from the vendor's descriptor (homing.vendors) or move it into the "
        "vendor's folder:\n  " + "\n  ".join(wrong)
    )


def test_the_exemptions_are_still_needed() -> None:
    # An exemption the code no longer needs is one a later change could use unseen.
    names = frozenset({*VENDORS, *BILLING_SOURCES})
    texts = [
        (str(p.relative_to(ROOT.parent)), text)
        for p in sorted(ROOT.rglob("*.py"))
        if not {"sandbox", "migrations"} & set(p.relative_to(ROOT).parts)
        for _, _, text in _texts(ast.parse(p.read_text()))
    ]
    for name, pattern in zip(PUBLIC_NAMES, PUBLIC, strict=False):
        assert any(pattern.search(text) for _, text in texts), f"{name!r} is spelled nowhere"
    for reader in SCHEME_READERS:
        spelled = [t for r, t in texts if r == reader and (t in SCHEMES or _SCHEME.search(t))]
        assert spelled, f"{reader} no longer reads the smtp:// scheme"
    assert names_in("SendGridProvider open_smtp Twilio's", names) == {"sendgrid", "smtp", "twilio"}
    assert not names_in("aiosmtplib resending polarity", names)


def test_a_descriptor_is_data() -> None:
    # Frozen: one declaration, read by every layer, changed by none.
    vendor = next(iter(VENDORS.values()))
    assert isinstance(vendor, Vendor)
    with pytest.raises(AttributeError):
        vendor.name = "other"  # type: ignore[misc]
