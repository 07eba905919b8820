"""A provider account's pacing rules: the ones in force, and an owner's override.

An account is paced by its vendor's preset (``homing.timing.presets``) unless its
``config.rate_rules`` overrides it (``homing.timing.pacing.account_rules``; an empty
override turns pacing off). The form is a table of at most ``MAX_RULES`` rows (scope,
limit, per seconds) with empty rows to fill, so it needs no script; it is validated
by the model the API validates ``rate_rules`` with (``RATE_RULES``) and stored as
``PATCH /v1/providers/{id}`` stores it, recording the same ``provider.updated`` event
with the config's diff. "Reset to the preset" drops the override.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from fastapi import APIRouter
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from homing.console.access import MemberDep, OwnerFormDep, ServicesDep, View
from homing.console.flash import flash
from homing.console.forms import Form
from homing.console.page_params import ProviderId
from homing.console.routing import ConsoleRoute
from homing.console.templating import render
from homing.errors import InvalidRequest
from homing.managers.audit import diff
from homing.models import AuditAction, ProviderAccount
from homing.services import Services
from homing.timing.pacing import RATE_RULES, Scope, account_rules
from homing.timing.presets import PRESETS

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)

MAX_RULES = 8
SPARE_ROWS = 2
MAX_NUMBER_CHARS = 12
SCOPES: tuple[str, ...] = get_args(Scope)
COLUMNS = ("scope", "limit", "per_seconds")
SAVED = "Saved: the next send is paced by the rules below."
FIELDS = frozenset({"csrf"} | {f"{c}-{i}" for c in COLUMNS for i in range(MAX_RULES)})


@dataclass(frozen=True, slots=True)
class Row:
    """One row of the rules table, as shown or as typed."""

    scope: str = ""
    limit: str = ""
    per_seconds: str = ""


def _tenant_id(view: View) -> str:
    assert view.seat is not None
    return view.seat.tenant.id


def _rows(rules: list[Row]) -> list[Row]:
    """``rules`` and empty rows to fill, ``MAX_RULES`` at most."""
    return (rules + [Row()] * SPARE_ROWS)[: max(MAX_RULES, len(rules))]


def _page(
    request: Request,
    account: ProviderAccount,
    rows: list[Row] | None = None,
    problem: str = "",
) -> Response:
    rules = account_rules(account)
    shown = [Row(r.scope, str(r.limit), str(r.per_seconds)) for r in rules]
    return render(
        request,
        "pacing.html",
        422 if problem else 200,
        account=account,
        rules=rules,
        overridden="rate_rules" in account.config,
        preset=PRESETS.get(account.vendor, ()),
        rows=_rows(rows if rows is not None else shown),
        scopes=SCOPES,
        max_rules=MAX_RULES,
        problem=problem,
    )


@router.get("/t/{tenant_id}/providers/{provider_id}/pacing")
async def pacing(
    request: Request,
    provider_id: ProviderId,
    view: MemberDep,
    services: ServicesDep,
) -> Response:
    """The rules in force (preset or override); owners edit them."""
    account = await services.providers.get(_tenant_id(view), provider_id)
    return _page(request, account)


def read_rows(form: Form) -> list[Row]:
    """The form's rows, empty ones left out; InvalidRequest for a field the table does
    not have (a row past ``MAX_RULES``) or one too long to be a number."""
    if form.names() - FIELDS:
        raise InvalidRequest(f"At most {MAX_RULES} rules, with a scope, a limit and seconds.")
    rows = []
    for i in range(MAX_RULES):
        row = Row(*(form.get(f"{c}-{i}", MAX_NUMBER_CHARS).strip() for c in COLUMNS))
        if row != Row():
            rows.append(row)
    return rows


def validated(rows: list[Row]) -> list[dict[str, Any]]:
    """The rows as stored rules, validated as the API validates ``rate_rules``."""
    try:
        rules = RATE_RULES.validate_python(
            [{"scope": r.scope, "limit": r.limit, "per_seconds": r.per_seconds} for r in rows]
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = first["loc"]
        row = int(where[0]) + 1 if where and isinstance(where[0], int) else 1
        column = str(where[1]).replace("_", " ") if len(where) > 1 else "rule"
        raise InvalidRequest(f"Rule {row}, {column}: {first['msg']}.") from None
    return [r.model_dump() for r in rules]


async def _store_config(
    services: Services, view: View, account: ProviderAccount, config: dict[str, Any]
) -> None:
    """Store ``config`` with the event ``PATCH /v1/providers/{id}`` records."""
    tenant_id = _tenant_id(view)
    event = services.audit.event(
        view.actor,
        AuditAction.PROVIDER_UPDATED,
        tenant_id=tenant_id,
        target_type="provider",
        target_id=account.id,
        changes=diff({"config": account.config}, {"config": config}),
    )
    await services.providers.update(tenant_id, account.id, audit=event, config=config)


@router.post("/t/{tenant_id}/providers/{provider_id}/pacing")
async def set_rules(
    request: Request,
    provider_id: ProviderId,
    view: MemberDep,
    form: OwnerFormDep,
    services: ServicesDep,
) -> Response:
    """Override the preset with the table's rules (no rows: no pacing)."""
    account = await services.providers.get(_tenant_id(view), provider_id)
    rows = read_rows(form)
    try:
        rules = validated(rows)
    except InvalidRequest as exc:
        return _page(request, account, rows, exc.message)
    await _store_config(services, view, account, {**account.config, "rate_rules": rules})
    await flash(services, view, SAVED)
    return RedirectResponse(request.url.path, status_code=303)


def _reset_said(provider: str) -> str:
    if PRESETS.get(provider):
        return f"Reset: the next send is paced by the {provider} preset."
    return f"Reset: {provider} has no preset, so this account is not paced."


@router.post("/t/{tenant_id}/providers/{provider_id}/pacing/reset")
async def reset(
    request: Request,
    provider_id: ProviderId,
    view: MemberDep,
    _form: OwnerFormDep,
    services: ServicesDep,
) -> Response:
    """Drop the override: the vendor's preset paces the account again."""
    account = await services.providers.get(_tenant_id(view), provider_id)
    if "rate_rules" in account.config:
        config = {k: v for k, v in account.config.items() if k != "rate_rules"}
        await _store_config(services, view, account, config)
    await flash(services, view, _reset_said(account.vendor))
    return RedirectResponse(
        f"/t/{_tenant_id(view)}/providers/{provider_id}/pacing", status_code=303
    )
