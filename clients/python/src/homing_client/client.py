"""``Client``: the synchronous client. ``homing_client.aio.AsyncClient`` has the same
surface with ``await``.

    client = Client(base_url="http://127.0.0.1:8000", api_key="hk_...")
    queued = client.email.send(to="ada@example.com", from_="a@acme.example",
                               subject="Hello", text="Hi")
    job = client.jobs.get(queued.id)

Its code in ``homing_client._sync`` is generated from ``homing_client._async`` by
clients/python/unasync.py: change the async side and run the script.
"""

# ruff: noqa: PLC0414 (``X as X``: the resource classes' explicit re-export, PEP 484)

from __future__ import annotations

from homing_client._sync.account import (
    ApiKeys as ApiKeys,
    AuditLog as AuditLog,
    Domains as Domains,
    Providers as Providers,
    Reports as Reports,
    Settings as Settings,
    Usage as Usage,
)
from homing_client._sync.admin import (
    Admin as Admin,
    AdminAuditLog as AdminAuditLog,
    AdminDeadLetters as AdminDeadLetters,
    AdminJobs as AdminJobs,
    AdminTenants as AdminTenants,
)
from homing_client._sync.client import Client
from homing_client._sync.jobs import (
    DeadLetters as DeadLetters,
    Jobs as Jobs,
)
from homing_client._sync.recipients import (
    Categories as Categories,
    Erasure as Erasure,
    Feed as Feed,
    Recipients as Recipients,
    Suppressions as Suppressions,
)
from homing_client._sync.sending import (
    Batch as Batch,
    Chat as Chat,
    Email as Email,
    InApp as InApp,
    Notifications as Notifications,
    Sms as Sms,
    Webhooks as Webhooks,
)
from homing_client._sync.templates import (
    Layouts as Layouts,
    Templates as Templates,
)

__all__ = ["Client"]
