"""Who a request is; the SQL of tenants is ``homing.store.tenants``."""

from __future__ import annotations

from dataclasses import dataclass

from homing.models import Tenant


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request is: the tenant and the key it used."""

    tenant: Tenant
    api_key_id: str
    test_key: bool
