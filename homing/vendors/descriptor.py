"""What Homing knows of one vendor, declared once: the ``Vendor`` descriptor.

A descriptor is data only (no I/O, no adapter class): the kernel holds it so every layer
may read it. The parts that live in a higher layer (the adapter, the inbound verifier and
parser) are registered in that layer's registry under the descriptor's ``name``, and
``tests/unit/test_vendors.py`` walks every registry against ``homing.vendors.VENDORS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from homing.channels import Channel

__all__ = ["ChatAddress", "Credential", "Endpoint", "RateRuleSpec", "Vendor"]

# How an account's destination is named and checked (``homing.providers.endpoints``):
# an HTTP API under ``config.base_url`` (default: the vendor's own), a mail server by
# ``host`` and ``port`` in the credentials, or a whole webhook URL in the credentials.
Endpoint = Literal["base_url", "mail_server", "webhook_url"]
# (scope, limit, per_seconds), in the shape of ``homing.timing.pacing.RateRule``.
RateRuleSpec = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class Credential:
    """One credential field: required for registration, masked when shown (``secret``),
    a yes/no switch (``flag``)."""

    name: str
    required: bool = True
    secret: bool = False
    flag: bool = False


@dataclass(frozen=True, slots=True)
class ChatAddress:
    """The chat ids a chat vendor takes: a linear-time pattern over at most 100
    characters, the words that describe it, whether ``@names`` are case-insensitive,
    the text formats the vendor renders, and the field of a recipient that holds its
    chat id (``PUT /v1/recipients/{external_id}``)."""

    pattern: str
    help: str
    fold_at_names: bool = False
    formats: frozenset[str] = frozenset({"plain", "markdown", "html"})
    recipient_field: str = ""


@dataclass(kw_only=True, frozen=True, slots=True)
class Vendor:
    """One vendor, named once.

    ``name``: how Homing calls it (the API's ``provider``); ``title``: its own spelling,
    for texts made from the registries; ``credentials``: what a registration carries
    (required ones first); ``config``: the config values worth setting at the start;
    ``hosts``: its official API hosts and the regional hosts its reference documents;
    ``endpoint``: how the destination is named; ``inbound_secret``: the kind of secret
    its events are verified with (None: it sends no events Homing verifies); ``pacing``:
    its published rate rules; ``chat``: the chat ids it takes (chat vendors only);
    ``owned_headers``: the email header fields it sets itself, which a job may not carry
    (``homing.email_headers``); ``secret_shapes``: how its secrets begin in text
    (regular expressions: a key's prefix, a URL that is a credential), redacted from
    every log line (``homing.logs``); ``demo``: its place among the demo tenant's
    providers (``homing run --demo``; None: not one of them).
    """

    name: str
    title: str
    channel: Channel
    credentials: tuple[Credential, ...]
    config: tuple[str, ...] = ()
    hosts: frozenset[str] = frozenset()
    endpoint: Endpoint = "base_url"
    inbound_secret: str | None = None
    pacing: tuple[RateRuleSpec, ...] = ()
    chat: ChatAddress | None = field(default=None)
    owned_headers: frozenset[str] = frozenset()
    secret_shapes: tuple[str, ...] = ()
    demo: int | None = None

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.credentials if c.required)

    @property
    def optional(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.credentials if not c.required)

    @property
    def secrets(self) -> frozenset[str]:
        return frozenset(c.name for c in self.credentials if c.secret)
