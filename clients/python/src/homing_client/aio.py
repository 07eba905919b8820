"""``AsyncClient``: ``homing_client.client.Client`` with ``await``.

    client = AsyncClient(base_url="http://127.0.0.1:8000", api_key="hk_...")
    queued = await client.email.send(to="ada@example.com", from_="a@acme.example",
                                     subject="Hello", text="Hi")
    job = await client.jobs.get(queued.id)

Its code is in ``homing_client._async``, one module per group of calls; the sync client
is generated from it (clients/python/unasync.py), so both have one surface. It re-exports the
resource classes, for annotations.
"""

# ruff: noqa: PLC0414 (``X as X``: the resource classes' explicit re-export, PEP 484)

from __future__ import annotations

from homing_client._async.account import (
    ApiKeys as ApiKeys,
    AuditLog as AuditLog,
    Domains as Domains,
    Providers as Providers,
    Reports as Reports,
    Settings as Settings,
    Usage as Usage,
)
from homing_client._async.admin import (
    Admin as Admin,
    AdminAuditLog as AdminAuditLog,
    AdminDeadLetters as AdminDeadLetters,
    AdminJobs as AdminJobs,
    AdminTenants as AdminTenants,
)
from homing_client._async.client import AsyncClient
from homing_client._async.jobs import (
    DeadLetters as DeadLetters,
    Jobs as Jobs,
)
from homing_client._async.recipients import (
    Categories as Categories,
    Erasure as Erasure,
    Feed as Feed,
    Recipients as Recipients,
    Suppressions as Suppressions,
)
from homing_client._async.sending import (
    Batch as Batch,
    Chat as Chat,
    Email as Email,
    InApp as InApp,
    Notifications as Notifications,
    Sms as Sms,
    Webhooks as Webhooks,
)
from homing_client._async.templates import (
    Layouts as Layouts,
    Templates as Templates,
)

__all__ = ["AsyncClient"]
