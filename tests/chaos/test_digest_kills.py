"""A worker killed at each step of sending a digest, with SIGKILL, on SQLite and
PostgreSQL: no item is lost and none is sent twice (docs/notifications.md, "Digests",
"Durability").

A real process (``tests/chaos/digest_victim.py``) runs one sweep on the test's
database and kills itself, with its render workers, at the step named: the items
read, the notification built and rendered, mid-transaction after the digest's row was
marked, at the COMMIT, or after it. Then this process, as the restarted worker, sweeps
and delivers: exactly one email, with every item in order, whatever the step.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from homing.clock import ManualClock
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.settings import Settings
from tests.chaos.digest_victim import STEPS
from tests.conftest import TenantClient
from tests.e2e.conftest import Sandbox, deliver
from tests.e2e.test_digests import comment, ready, shown, sweep
from tests.processes import process_env

pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ITEMS = (("Bo", "one"), ("Cy", "two"), ("Di", "three"))


def _killed_at(step: str, env: dict[str, str], now: float, log: Path) -> int:
    with log.open("ab") as out:
        victim = subprocess.Popen(
            [sys.executable, "-m", "tests.chaos.digest_victim", step, repr(now)],
            env=env,
            cwd=REPO,
            stdout=out,
            stderr=out,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own group: it kills its render workers too
        )
        return victim.wait(timeout=120)


@pytest.mark.parametrize("step", STEPS)
async def test_a_worker_killed_at_any_step_of_a_digest_loses_nothing_and_doubles_nothing(
    services: Services,
    settings: Settings,
    secret_key: str,
    tenant: TenantClient,
    sandbox: SandboxServer,
    sb: Sandbox,
    clock: ManualClock,
    tmp_path: Path,
    step: str,
) -> None:
    await ready(tenant, sandbox)
    gathered = [(await comment(tenant, who, text))["id"] for who, text in ITEMS]
    clock.advance(3600)
    env = process_env(settings, secret_key)
    log = tmp_path / "victim.log"
    code = await asyncio.to_thread(_killed_at, step, env, clock.now(), log)
    assert code == -signal.SIGKILL, log.read_text()
    before = (await shown(tenant, gathered[0]))["digest"]["status"]
    assert before == ("sent" if step == "after" else "open")

    assert await sweep(services) == (0 if step == "after" else 1)
    assert await sweep(services) == 0
    assert await deliver(services) == 1
    [email] = await sb.messages("resend")
    assert email["subject"] == "3 new comments"
    assert email["text"] == "Bo: one\nCy: two\nDi: three\n"
    digests = [(await shown(tenant, n))["digest"] for n in gathered]
    assert {(d["status"], d["notification_id"]) for d in digests} == {
        ("sent", digests[0]["notification_id"])
    }
    assert [d["position"] for d in digests] == [0, 1, 2]
