"""Every vendor has every part, and lives in its own files (docs/architecture.md,
"Vendors").

The descriptors (``homing.vendors.VENDORS``) are the list: each layer's registry is
walked against it, both ways, so a vendor that lacks a part (or a part without a
vendor) fails here rather than at a tenant's first send. Outside a vendor's own files
no module spells a vendor's name in a string: they read it from the descriptor.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import homing
from homing.inbound.billing import BILLING_SOURCES
from homing.inbound.sources import KINDS, SOURCES
from homing.models import Channel
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
# The smtp:// scheme of HOMING_SANDBOX_URLS is a URL scheme that happens to be a
# vendor's name: these modules parse sandbox URLs, they name no vendor.
SCHEME_READERS = frozenset({"homing/providers/endpoints.py", "homing/dispatch/sandbox_guard.py"})
SCHEMES = frozenset({"smtp"})


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


def _own_files(name: str) -> frozenset[str]:
    """A vendor's own files: its folder; a billing vendor's, its module in billing."""
    own = {str(p.relative_to(ROOT.parent)) for p in (ROOT / "vendors" / name).glob("*.py")}
    if name in BILLING_SOURCES:
        own.add(f"homing/inbound/billing/{name}.py")
    return frozenset(own)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def test_no_module_outside_a_vendors_own_files_names_it_in_a_string() -> None:
    names = {*VENDORS, *BILLING_SOURCES}
    own = {name: _own_files(name) for name in names}
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = str(path.relative_to(ROOT.parent))
        if "sandbox" in path.relative_to(ROOT).parts or "migrations" in path.parts:
            continue  # the emulator keeps its own names; revisions are frozen copies
        for line, value in _strings(path):
            if value in SCHEMES and relative in SCHEME_READERS:
                continue
            if value in names and relative not in own[value]:
                wrong.append(f"{relative}:{line} names {value!r}")
    assert not wrong, "read the name from homing.vendors instead:\n  " + "\n  ".join(wrong)


def test_a_descriptor_is_data() -> None:
    # Frozen: one declaration, read by every layer, changed by none.
    vendor = next(iter(VENDORS.values()))
    assert isinstance(vendor, Vendor)
    with pytest.raises(AttributeError):
        vendor.name = "other"  # type: ignore[misc]
