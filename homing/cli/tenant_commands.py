"""``homing tenant …``: the admin API's tenant operations from the command line.

Output is JSON on stdout, shaped like the admin API's responses; ``create`` prints
exactly ``{"tenant_id": …, "api_key": …}``.
"""

from __future__ import annotations

import argparse
from typing import Any

from homing.api.schemas.tenants import TenantDetail, TenantList, TenantPublic
from homing.api.schemas.usage import UsagePublic
from homing.cli.output import emit
from homing.domain.audit import AuditEvent
from homing.errors import InvalidRequest
from homing.managers.audit import CLI_ACTOR, diff, tenant_fields
from homing.managers.plans import RATE_WINDOW_SECONDS
from homing.models import AuditAction, Plan, Tenant
from homing.services import Services


def parse_quotas(items: list[str] | None) -> dict[str, int | None] | None:
    """``["webhook=5000", "email=unlimited"]`` → ``{"webhook": 5000, "email": None}``."""
    if items is None:
        return None
    quotas: dict[str, int | None] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InvalidRequest(f"--quota {item!r}: write NAME=LIMIT, e.g. webhook=5000")
        if value.strip() == "unlimited":
            quotas[name.strip()] = None
        elif value.strip().isdigit():
            quotas[name.strip()] = int(value)
        else:
            raise InvalidRequest(f"--quota {item!r}: the limit is a number or 'unlimited'")
    return quotas


async def run(services: Services, args: argparse.Namespace) -> int:
    """Carry out one ``homing tenant`` command and print its JSON."""
    admin = services.tenant_admin
    command = args.tenant_command
    if command == "create":
        quotas = parse_quotas(args.quota)
        given = {"name": args.name, "plan": args.plan, "rate_limit_per_minute": args.rate}
        event = services.audit.event(
            CLI_ACTOR,
            AuditAction.TENANT_CREATED,
            tenant_id=None,
            target_type="tenant",
            changes={**given, "quotas": quotas},
        )
        tenant, key = await admin.create(
            args.name,
            Plan(args.plan),
            rate_limit_per_minute=args.rate,
            quotas=quotas,
            audit=event,
        )
        return emit(args, {"tenant_id": tenant.id, "api_key": key})
    if command == "list":
        page = await admin.page(limit=args.limit, cursor=args.cursor)
        listed = [_public(services, t) for t in page.tenants]
        return emit(
            args, TenantList(data=listed, next_cursor=page.next_cursor).model_dump(mode="json")
        )
    if command == "show":
        return emit(args, (await _detail(services, args.id)).model_dump(mode="json"))
    tenant = await _change(services, args)
    return emit(args, _public(services, tenant).model_dump(mode="json"))


def _event(
    services: Services, tenant_id: str, action: AuditAction, changes: dict[str, Any]
) -> AuditEvent:
    return services.audit.event(
        CLI_ACTOR,
        action,
        tenant_id=tenant_id,
        target_type="tenant",
        target_id=tenant_id,
        changes=changes,
    )


async def _change(services: Services, args: argparse.Namespace) -> Tenant:
    admin = services.tenant_admin
    if args.tenant_command in ("suspend", "unsuspend"):
        suspend = args.tenant_command == "suspend"
        action = AuditAction.TENANT_SUSPENDED if suspend else AuditAction.TENANT_RESUMED
        event = _event(services, args.id, action, {"suspended": suspend})
        return await (admin.suspend if suspend else admin.unsuspend)(args.id, event)
    changes: dict[str, Any] = {}
    if args.tenant_command == "set-plan":
        changes["plan"] = Plan(args.plan)
    if getattr(args, "plan_rate", False) or getattr(args, "rate", None) is not None:
        changes["rate_limit_per_minute"] = None if args.plan_rate else args.rate
    if getattr(args, "plan_quotas", False) or getattr(args, "quota", None) is not None:
        changes["quota_overrides"] = None if args.plan_quotas else parse_quotas(args.quota)
    changed = diff(tenant_fields(await admin.get(args.id)), changes)
    plan = "plan" in changed
    action = AuditAction.TENANT_PLAN_CHANGED if plan else AuditAction.TENANT_UPDATED
    return await admin.change(args.id, _event(services, args.id, action, changed), **changes)


async def _detail(services: Services, tenant_id: str) -> TenantDetail:
    tenant = await services.tenant_admin.get(tenant_id)
    report = await services.tenant_admin.usage(tenant)
    usage = UsagePublic.of(report, RATE_WINDOW_SECONDS)
    return TenantDetail(**_public(services, tenant).model_dump(), usage=usage)


def _public(services: Services, tenant: Tenant) -> TenantPublic:
    return TenantPublic.of(tenant, services.admission.limits(tenant))
