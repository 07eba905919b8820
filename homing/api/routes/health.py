"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter, Request

from homing.api.deps import ServicesDep
from homing.api.readiness import OK, Readiness
from homing.errors import StoreUnavailable

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz(services: ServicesDep) -> dict[str, str]:
    """200 when the database answers; 503 ``unavailable`` otherwise."""
    await services.db.ping()
    return {"status": "ok", "database": services.db.dialect}


@router.get("/readyz")
async def readyz(request: Request) -> dict[str, object]:
    """200 when the database answers, its migrations are at head, Redis answers (when
    configured) and this process's worker loop (if it runs one) made progress lately;
    503 ``unavailable`` naming the failing checks otherwise (docs/sending.md, the health rows)."""
    readiness: Readiness = request.app.state.readiness
    checks = await readiness.checks()
    failing = sorted(name for name, answer in checks.items() if answer != OK)
    if failing:
        raise StoreUnavailable(f"not ready: {', '.join(failing)}", {"checks": checks})
    return {"status": "ok", "checks": checks}
