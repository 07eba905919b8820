"""Every vendor Homing sends through, one descriptor each (``homing.vendors.descriptor``).

Adding a vendor starts here: its own folder ``homing/vendors/<name>/``, whose
``__init__.py`` declares ``VENDOR``, and one line below (docs/architecture.md, "Adding a
vendor"). The order is the order tenants see them in (email, SMS, chat).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from homing.vendors import (
    mailgun,
    postmark,
    resend,
    sendgrid,
    slack,
    smtp,
    telegram,
    twilio,
    vonage,
)
from homing.vendors.descriptor import ChatAddress, Credential, Endpoint, RateRuleSpec, Vendor

__all__ = ["VENDORS", "ChatAddress", "Credential", "Endpoint", "RateRuleSpec", "Vendor", "vendor"]

VENDORS: Final[Mapping[str, Vendor]] = {
    v.name: v
    for v in (
        sendgrid.VENDOR,
        resend.VENDOR,
        postmark.VENDOR,
        mailgun.VENDOR,
        smtp.VENDOR,
        twilio.VENDOR,
        vonage.VENDOR,
        telegram.VENDOR,
        slack.VENDOR,
    )
}


def vendor(name: str) -> Vendor | None:
    """The descriptor called ``name``; None for a name that is no vendor."""
    return VENDORS.get(name)
