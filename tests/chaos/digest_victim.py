"""A worker process that runs one digest sweep and SIGKILLs itself (and its render
workers: its whole process group) at the step named on its command line, for
``tests/chaos/test_digest_kills.py``.

    python -m tests.chaos.digest_victim STEP NOW

STEP is where it dies: ``items`` (the digest and its items read, nothing built),
``built`` (the notification built and rendered, no transaction open), ``marked`` (in
the sending transaction, the digest's row updated, before the notification is
stored), ``commit`` (everything written, the COMMIT about to go), ``after`` (the sweep
returned: committed). NOW is the epoch the sweep runs at (the test's clock). The
settings come from the environment (``HOMING_*``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

from sqlalchemy import event

from homing.api.digest_plans import planner
from homing.clock import ManualClock
from homing.domain.digests import DueDigest
from homing.domain.tenants import Principal
from homing.services import build
from homing.settings import Settings
from homing.store.notifications import NewNotification

STEPS = ("items", "built", "marked", "commit", "after")


def die() -> None:
    sys.stderr.flush()
    os.killpg(os.getpgid(0), signal.SIGKILL)


def kill_in_transaction(engine: Any, step: str) -> None:
    """Die at ``marked`` or ``commit``, watching the statements the sweep sends."""
    marked = False

    @event.listens_for(engine, "after_cursor_execute")
    def _after(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        nonlocal marked
        if statement.lstrip().upper().startswith("UPDATE DIGESTS"):
            marked = True

    @event.listens_for(engine, "before_cursor_execute")
    def _before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        # The digest's UPDATE ran in this transaction; the notification's INSERT does not.
        if step == "marked" and marked and statement.lstrip().upper().startswith("INSERT"):
            die()

    @event.listens_for(engine, "commit")
    def _commit(conn: Any) -> None:
        if step == "commit" and marked:
            die()


async def main(step: str, now: float) -> None:
    services = await build(Settings(), clock=ManualClock(now), run_migrations=False)
    plan = planner(services)

    async def dying_plan(principal: Principal, due: DueDigest, items: list[Any]) -> NewNotification:
        if step == "items":
            die()
        new = await plan(principal, due, items)
        if step == "built":
            die()
        return new

    kill_in_transaction(services.db.engine.sync_engine, step)
    await services.digests.sweep(dying_plan)
    if step == "after":
        die()
    await services.aclose()


if __name__ == "__main__":
    assert sys.argv[1] in STEPS, sys.argv[1]
    asyncio.run(main(sys.argv[1], float(sys.argv[2])))
