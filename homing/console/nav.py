"""The console's navigation: every page in the sidebar, defined once, here.

Two labelled sections: the tenant's pages (under ``/t/{tenant}/``, shown when the
page belongs to a tenant) and the operator's (shown to operators only). Adding a page
to the sidebar is one line in ``TENANT`` or ``OPERATOR``; ``base.html`` draws what
``sections`` returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from homing.console.access import View


@dataclass(frozen=True, slots=True)
class Page:
    """One link: its label and its address (a tenant's: relative to ``/t/{tenant}/``).
    ``owners_only``: shown to the tenant's owners only (the page refuses viewers)."""

    label: str
    path: str
    owners_only: bool = False


TENANT: tuple[Page, ...] = (
    Page("Overview", ""),
    Page("Messages", "messages"),
    Page("Notifications", "notifications"),
    Page("Send a test", "send-test", owners_only=True),
    Page("Dead letters", "dead-letters"),
    Page("Suppressions", "suppressions"),
    Page("Providers", "providers"),
    Page("Domains", "domains"),
    Page("Templates", "templates"),
    Page("Layouts", "layouts"),
    Page("Webhooks", "webhooks"),
    Page("API keys", "api-keys"),
    Page("Users", "users", owners_only=True),
    Page("Audit log", "audit", owners_only=True),
)
OPERATOR: tuple[Page, ...] = (
    Page("Tenants", "/operator/tenants"),
    Page("Queues", "/operator/queues"),
    Page("Dead letters", "/operator/dead-letters"),
    Page("Providers", "/operator/providers"),
    Page("Alerts", "/operator/alerts"),
    Page("Audit log", "/operator/audit"),
)


@dataclass(frozen=True, slots=True)
class Link:
    label: str
    href: str
    current: bool


@dataclass(frozen=True, slots=True)
class Section:
    """A labelled group of links (``key``: its heading's id)."""

    key: str
    title: str
    links: tuple[Link, ...]


def _current(href: str, path: str) -> bool:
    """Whether ``path`` is the page ``href`` or one under it (a tenant's overview,
    ``/t/x/``, is current only on itself)."""
    if href.endswith("/"):
        return path == href
    return path == href or path.startswith(href + "/")


def sections(view: View, path: str) -> list[Section]:
    """The sidebar of ``view`` on the page at ``path``."""
    shown: list[Section] = []
    if view.seat is not None:
        base = f"/t/{view.seat.tenant.id}/"
        links = tuple(
            Link(p.label, base + p.path, _current(base + p.path, path))
            for p in TENANT
            if view.owner or not p.owners_only
        )
        shown.append(Section("tenant", "Tenant", links))
    if view.user.operator:
        links = tuple(Link(p.label, p.path, _current(p.path, path)) for p in OPERATOR)
        shown.append(Section("operator", "Operator", links))
    return shown
