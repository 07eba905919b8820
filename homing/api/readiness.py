"""What ``/readyz`` checks: the database, its migrations, Redis and the worker loop.

Each check answers ``ok`` or what is wrong; the process is ready only when all say
``ok``. A database that answers but cannot store anything answers its storage cause
(``storage_full``, ``storage_read_only``, ``storage_permission_denied``:
``homing.store.storage``), and the 503 carries that code. The migrations' check is
cached for ``MIGRATIONS_CACHE_SECONDS`` (a probe every second would otherwise read
``alembic_version`` every second per process), and every check is bounded in time, so a
probe answers even while a dependency hangs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from homing.errors import (
    StorageFull,
    StoragePermissionDenied,
    StorageReadOnly,
    StoreError,
    StoreUnavailable,
)
from homing.services import Services
from homing.store.migrate import SchemaStatus, schema_status

OK = "ok"
MIGRATIONS_CACHE_SECONDS = 2.0
# A database that takes longer than this to answer SELECT 1 is not ready.
DATABASE_TIMEOUT_SECONDS = 5.0
_SCHEMA_CHECK = {"current": OK, "behind": "behind", "unknown": "unknown_revision"}
_STORAGE = {cls.code: cls for cls in (StorageFull, StorageReadOnly, StoragePermissionDenied)}


def not_ready(checks: dict[str, str]) -> StoreUnavailable | None:
    """The 503 error of ``checks`` that are not all ``ok`` (None when they are): each
    failing check named with its answer, under the database's storage code when it
    names one, ``unavailable`` otherwise."""
    failing = sorted(name for name, answer in checks.items() if answer != OK)
    if not failing:
        return None
    error = _STORAGE.get(checks.get("database", OK), StoreUnavailable)
    message = ", ".join(f"{name} ({checks[name]})" for name in failing)
    return error(f"not ready: {message}", {"checks": checks})


class Readiness:
    """The checks behind ``/readyz`` for one process's services; ``now`` is the
    monotonic clock the migrations' cache runs on. ``worker_required``: this process
    exists to run a worker loop (``homing worker``), so no loop running is ``stopped``."""

    def __init__(
        self,
        services: Services,
        now: Callable[[], float] = time.monotonic,
        *,
        worker_required: bool = False,
    ) -> None:
        self._services = services
        self._now = now
        self._worker_required = worker_required
        self._schema: tuple[float, SchemaStatus] | None = None

    async def checks(self) -> dict[str, str]:
        """Every check's answer by name; ``redis`` only with HOMING_REDIS_URL, ``worker``
        only while this process runs a worker loop (or must run one)."""
        services = self._services
        checks = {"database": await self._database()}
        checks["migrations"] = await self._migrations() if checks["database"] == OK else "unchecked"
        if services.limiter.shared:
            checks["redis"] = OK if await services.limiter.ping() else "unavailable"
        age = services.heartbeat.age()
        if age is not None:
            stalled = age > services.settings.worker.ready_stall_seconds
            checks["worker"] = "stalled" if stalled else OK
        elif self._worker_required:
            checks["worker"] = "stopped"
        return checks

    async def _database(self) -> str:
        db = self._services.db
        answers = await _answers(db.ping)
        cause = db.storage.now()
        if cause is not None:
            return cause.code
        return OK if answers else "unavailable"

    async def _migrations(self) -> str:
        now = self._now()
        if self._schema is None or now - self._schema[0] > MIGRATIONS_CACHE_SECONDS:
            try:
                async with asyncio.timeout(DATABASE_TIMEOUT_SECONDS):
                    status = await schema_status(self._services.db)
            except (StoreError, TimeoutError):
                return "unavailable"  # not cached: the next probe asks again
            self._schema = (now, status)
        return _SCHEMA_CHECK[self._schema[1]]


async def _answers(call: Callable[[], Awaitable[None]]) -> bool:
    try:
        async with asyncio.timeout(DATABASE_TIMEOUT_SECONDS):
            await call()
    except (StoreError, TimeoutError):
        return False
    return True
