"""Sending domains the sandbox's vendors have registered, and the records they ask for.

A domain whose name contains ``unverified`` never verifies; any other verifies the
first time verification is asked for, as if its DNS records were already published.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

NEVER_VERIFIES = "unverified"


def _dkim_key() -> str:
    return "k=rsa;p=" + base64.b64encode(secrets.token_bytes(48)).decode()


@dataclass(kw_only=True)
class SandboxDomain:
    """A sending domain as the emulated provider keeps it."""

    provider: str
    id: str
    name: str
    return_path: str | None = None
    dkim_verified: bool = False
    return_path_verified: bool = False
    verify_requested: bool = False
    selector: str = field(default_factory=lambda: "s" + secrets.token_hex(3))
    dkim_value: str = field(default_factory=_dkim_key)
    account_number: int = field(default_factory=lambda: 1000 + secrets.randbelow(9000))
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def verifiable(self) -> bool:
        return NEVER_VERIFIES not in self.name

    @property
    def verified(self) -> bool:
        return self.dkim_verified and (self.return_path is None or self.return_path_verified)

    def verify(self) -> bool:
        """Check every record at once; True when the domain is now verified."""
        self.verify_requested = True
        self.dkim_verified = self.verifiable
        self.return_path_verified = self.verifiable and self.return_path is not None
        return self.verified


class DomainBook:
    """Domains per vendor; a name is registered at most once per vendor."""

    def __init__(self) -> None:
        self._domains: dict[tuple[str, str], SandboxDomain] = {}

    def add(
        self, provider: str, name: str, domain_id: str, return_path: str | None = None
    ) -> SandboxDomain | None:
        """Register ``name`` with ``provider``; None when that vendor already has it."""
        if self.by_name(provider, name) is not None:
            return None
        domain = SandboxDomain(
            provider=provider, id=domain_id, name=name.lower(), return_path=return_path
        )
        self._domains[(provider, domain_id)] = domain
        return domain

    def get(self, provider: str, domain_id: str) -> SandboxDomain | None:
        return self._domains.get((provider, domain_id))

    def by_name(self, provider: str, name: str) -> SandboxDomain | None:
        return next(
            (
                d
                for d in self._domains.values()
                if d.provider == provider and d.name == name.lower()
            ),
            None,
        )

    def __len__(self) -> int:
        return len(self._domains)

    def clear(self) -> None:
        self._domains.clear()


# The vendors' JSON for a domain (homing.sandbox.domain_routes serves them).


def sendgrid_body(domain: SandboxDomain) -> dict[str, Any]:
    n, name, ok = domain.account_number, domain.name, domain.dkim_verified
    dns = {
        "mail_cname": (f"em{n}.{name}", f"u{n}.wl.sendgrid.net"),
        "dkim1": (f"s1._domainkey.{name}", f"s1.domainkey.u{n}.wl.sendgrid.net"),
        "dkim2": (f"s2._domainkey.{name}", f"s2.domainkey.u{n}.wl.sendgrid.net"),
    }
    return {
        "id": int(domain.id),
        "domain": name,
        "subdomain": f"em{n}",
        "automatic_security": True,
        "valid": domain.verified,
        "dns": {
            key: {"valid": ok, "type": "cname", "host": host, "data": data}
            for key, (host, data) in dns.items()
        },
    }


def resend_status(domain: SandboxDomain) -> str:
    if not domain.verify_requested:
        return "not_started"
    return "verified" if domain.verified else "failed"


def resend_body(domain: SandboxDomain) -> dict[str, Any]:
    status = resend_status(domain)
    record = "verified" if status == "verified" else status
    return {
        "object": "domain",
        "id": domain.id,
        "name": domain.name,
        "status": status,
        "created_at": domain.created_at.isoformat(),
        "region": "us-east-1",
        "records": [
            {"record": "SPF", "name": "send", "type": "MX", "ttl": "Auto", "status": record,
             "value": "feedback-smtp.us-east-1.amazonses.com", "priority": 10},
            {"record": "SPF", "name": "send", "type": "TXT", "ttl": "Auto", "status": record,
             "value": '"v=spf1 include:amazonses.com ~all"'},
            {"record": "DKIM", "name": "resend._domainkey", "type": "TXT", "ttl": "Auto",
             "status": record, "value": domain.dkim_value.removeprefix("k=rsa;")},
        ],
    }  # fmt: skip


def postmark_body(domain: SandboxDomain) -> dict[str, Any]:
    host = f"{domain.selector}pm._domainkey.{domain.name}"
    done = domain.dkim_verified
    return {
        "ID": int(domain.id),
        "Name": domain.name,
        "SPFVerified": False,
        "DKIMVerified": done,
        "WeakDKIM": False,
        "DKIMHost": host if done else "",
        "DKIMTextValue": domain.dkim_value if done else "",
        "DKIMPendingHost": "" if done else host,
        "DKIMPendingTextValue": "" if done else domain.dkim_value,
        "DKIMUpdateStatus": "Verified" if done else "Pending",
        "ReturnPathDomain": domain.return_path or "",
        "ReturnPathDomainVerified": domain.return_path_verified,
        "ReturnPathDomainCNAMEValue": "pm.mtasv.net",
    }


def _mailgun_record(kind: str, name: str, value: str, valid: str) -> dict[str, str]:
    return {"record_type": kind, "name": name, "value": value, "valid": valid}


def mailgun_body(domain: SandboxDomain, message: str) -> dict[str, Any]:
    ok = "valid" if domain.dkim_verified else "unknown"
    name = domain.name
    return {
        "domain": {
            "id": domain.id,
            "name": name,
            "state": "active" if domain.dkim_verified else "unverified",
            "type": "custom",
            "smtp_login": f"postmaster@{name}",
            "created_at": domain.created_at.isoformat(),
        },
        "sending_dns_records": [
            _mailgun_record("TXT", name, "v=spf1 include:mailgun.org ~all", ok),
            _mailgun_record("TXT", f"{domain.selector}._domainkey.{name}", domain.dkim_value, ok),
            _mailgun_record("CNAME", f"email.{name}", "mailgun.org", ok),
        ],
        "receiving_dns_records": [
            {**_mailgun_record("MX", name, f"{mx}.mailgun.org", ok), "priority": "10"}
            for mx in ("mxa", "mxb")
        ],
        "message": message,
    }
