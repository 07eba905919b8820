"""The tenant settings resource (``GET/PATCH /v1/settings``): read and change them.

Settings are per tenant and take effect for what happens after the change: a
webhook delivered after ``webhook_signature_format`` changed carries the new format
(deliveries read the settings with their signing secrets).
"""

from __future__ import annotations

from collections.abc import Mapping

from homing.errors import InvalidRequest
from homing.store.audit import AuditEvent
from homing.store.tenant_settings import SETTING_NAMES, TenantSettings, TenantSettingsStore
from homing.webhooks.signing import SignatureFormat

__all__ = ["TenantSettingsManager"]


class TenantSettingsManager:
    """Reads and changes tenants' settings through ``TenantSettingsStore``."""

    def __init__(self, store: TenantSettingsStore) -> None:
        self._store = store

    async def get(self, tenant_id: str) -> TenantSettings:
        """The tenant's settings, defaults for what it never changed."""
        return await self._store.get(tenant_id)

    async def update(
        self, tenant_id: str, changes: Mapping[str, str], audit: AuditEvent | None = None
    ) -> TenantSettings:
        """Change the named settings; InvalidRequest for a name or value not allowed
        (the API's schema refuses those first; this guards every other caller)."""
        unknown = sorted(set(changes) - SETTING_NAMES)
        if unknown:
            raise InvalidRequest("unknown settings", {"unknown": unknown})
        values: dict[str, object] = {}
        fmt = changes.get("webhook_signature_format")
        if fmt is not None:
            allowed = [f.value for f in SignatureFormat]
            if fmt not in allowed:
                raise InvalidRequest(
                    "webhook_signature_format is not allowed", {"allowed": allowed}
                )
            values["webhook_signature_format"] = fmt
        return await self._store.update(tenant_id, values, audit)
