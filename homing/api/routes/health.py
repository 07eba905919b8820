"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter, Request

from homing.api.deps import ServicesDep
from homing.api.readiness import Readiness, not_ready

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
    503 naming the failing checks otherwise, ``unavailable`` or the storage code of a
    database that cannot store anything (docs/sending.md, the health rows)."""
    readiness: Readiness = request.app.state.readiness
    checks = await readiness.checks()
    error = not_ready(checks)
    if error is not None:
        raise error
    return {"status": "ok", "checks": checks}
