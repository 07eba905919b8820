"""What a send in a category, or to a recipient, carries of the recipient's links
(docs/recipients.md, "Links"): a marketing email's ``List-Unsubscribe`` and
``List-Unsubscribe-Post`` fields (RFC 2369, RFC 8058), the template variables
``unsubscribe_url`` and ``preferences_url``, and, for a send to an address in a
category, the check of that address's unsubscribes. A send that names neither a
recipient nor a category costs nothing here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from homing.domain.preferences import PreferenceCheck
from homing.email_headers import Headers
from homing.managers.recipients import Addressed
from homing.services import Services

__all__ = ["LinkExtras", "link_extras", "unsubscribe_mailbox"]

MARKETING = "marketing"


@dataclass(frozen=True, slots=True)
class LinkExtras:
    """What one send gains: header fields (an email's), template variables and the
    preference its accept checks."""

    headers: Headers = ()
    variables: dict[str, str] = field(default_factory=dict, repr=False)
    preference: PreferenceCheck | None = None


_NONE = LinkExtras()


async def unsubscribe_mailbox(
    services: Services, tenant_id: str, targets: Iterable[Addressed]
) -> str | None:
    """The tenant's unsubscribe mailbox when any of these sends is in a marketing
    category (one read of its settings then; none otherwise)."""
    if not any(target.kind == MARKETING for target in targets):
        return None
    return (await services.tenant_settings.get(tenant_id)).unsubscribe_mailbox


def link_extras(
    services: Services,
    tenant_id: str,
    channel: str,
    category: str | None,
    address_key: str | None,
    target: Addressed,
    mailbox: str | None = None,
) -> LinkExtras:
    """The extras of one addressed send; PublicUrlRequired for a marketing email when
    HOMING_PUBLIC_URL is unset. ``mailbox``: the tenant's unsubscribe mailbox."""
    if category is None and target.recipient_id is None:
        return _NONE
    optouts = services.optouts
    links = optouts.for_send(tenant_id, channel, category, target.recipient_id, address_key)
    headers: Headers = ()
    if channel == "email" and target.kind == MARKETING:
        headers = optouts.marketing_headers(links, mailbox)
    variables: dict[str, str] = {}
    if links is not None and target.recipient_id is not None:
        if links.preferences_url is not None:
            variables["preferences_url"] = links.preferences_url
        if links.unsubscribe_url is not None:
            variables["unsubscribe_url"] = links.unsubscribe_url
    preference = target.preference
    if category is not None and target.recipient_id is None and address_key is not None:
        refs = optouts.links.address_refs(tenant_id, channel, address_key)
        preference = PreferenceCheck(None, category, refs[0], refs[1:])
    return LinkExtras(headers, variables, preference)
