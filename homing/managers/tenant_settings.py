"""The tenant settings resource (``GET/PATCH /v1/settings``): read and change them.

Settings are per tenant and take effect for what happens after the change: a
webhook delivered after ``webhook_signature_format`` changed carries the new format
(deliveries read the settings with their signing secrets).
"""

from __future__ import annotations

from collections.abc import Mapping

from homing.errors import InvalidRequest
from homing.models import MAX_TTL_SECONDS, MIN_TTL_SECONDS, Channel
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

    async def update(self, tenant_id: str, changes: Mapping[str, object]) -> TenantSettings:
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
        if "default_ttl_seconds" in changes:
            values["default_ttl_seconds"] = default_ttls(changes["default_ttl_seconds"])
        return await self._store.update(tenant_id, values)


def default_ttls(value: object) -> dict[str, int]:
    """``{"email": 3600, ...}`` checked: known channels, whole seconds within the ttl
    bounds (README "Expiry"); InvalidRequest otherwise."""
    channels = {c.value for c in Channel}
    if not isinstance(value, Mapping) or not set(value) <= channels:
        raise InvalidRequest(
            "default_ttl_seconds maps channels to seconds", {"allowed": sorted(channels)}
        )
    for seconds in value.values():
        if type(seconds) is not int or not MIN_TTL_SECONDS <= seconds <= MAX_TTL_SECONDS:
            raise InvalidRequest(
                "a default ttl is whole seconds",
                {"min": MIN_TTL_SECONDS, "max": MAX_TTL_SECONDS},
            )
    return {str(channel): int(seconds) for channel, seconds in value.items()}
