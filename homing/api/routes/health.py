"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter

from homing.api.deps import ServicesDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz(services: ServicesDep) -> dict[str, str]:
    """200 when the database answers; 503 ``unavailable`` otherwise."""
    await services.db.ping()
    return {"status": "ok", "database": services.db.dialect}
