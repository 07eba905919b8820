"""Real ``homing api`` processes a module's tests share (from module-scoped fixtures).

Each ``homing`` process costs seconds of CPU to start (imports, the migration check), and
a command run to make a tenant or a user (``homing migrate``, ``homing tenant create``,
``homing user add``) as much again. So a module prepares its data directory once, here
in the test process: the process's migrated SQLite template copied in as ``homing.db``
(what ``homing migrate`` makes), and its tenants and console users made by the same
managers the commands call. Its ``homing api`` processes then start on that directory,
all at once, each waited on until it answers ``/healthz``, and each is stopped after its
module and checked to exit 0. The tests keep apart by using tenants (and users) of their
own.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from homing.managers.audit import CLI_ACTOR
from homing.models import Plan, Role
from homing.services import build
from tests.console_helpers import PASSWORD
from tests.fixtures import settings_for, sqlite_url
from tests.processes import HomingProcess, free_port, stop_together, wait_healthy

# A loaded 2-core machine (2 test workers, their processes) may take this long to start one.
START_SECONDS = 120.0
# A graceful stop waits up to 10 s for open responses, then closes the services.
STOP_SECONDS = 60.0


@dataclass(frozen=True)
class Prepared:
    """A data directory ready for ``homing`` processes: their environment (with
    HOMING_DATA_DIR), and each tenant made in it by name, as ``homing tenant create``
    prints it (``tenant_id``, ``api_key``)."""

    env: dict[str, str]
    tenants: dict[str, dict[str, str]]


def prepared(
    sqlite_template: Path,
    directory: Path,
    env: dict[str, str],
    tenants: Sequence[str] = ("acme",),
    owners: Sequence[tuple[str, str]] = (),
) -> Prepared:
    """A data directory under ``directory`` with ``tenants`` (STARTUP plan) and console
    ``owners`` ((email, tenant name): an owner of that tenant whose password is
    ``tests.console_helpers.PASSWORD``); ``env``: the rest of the processes' environment."""
    data = directory / "data"
    data.mkdir(parents=True)
    shutil.copyfile(sqlite_template, data / "homing.db")
    made = asyncio.run(_populate(directory, tenants, owners))
    return Prepared({"HOMING_DATA_DIR": str(data), **env}, made)


async def _populate(
    directory: Path, tenants: Sequence[str], owners: Sequence[tuple[str, str]]
) -> dict[str, dict[str, str]]:
    # No secret key: on SQLite the key file is made in the data directory, which the
    # processes read, as they would after ``homing migrate``.
    settings = settings_for(sqlite_url(directory / "data"), directory, None)
    services = await build(settings, run_migrations=False)
    try:
        made = {}
        for name in tenants:
            tenant, key = await services.tenants.create(name, Plan.STARTUP)
            made[name] = {"tenant_id": tenant.id, "api_key": key}
        for email, name in owners:
            await services.people.add_user(
                email, PASSWORD, actor=CLI_ACTOR, tenant_id=made[name]["tenant_id"], role=Role.OWNER
            )
        return made
    finally:
        await services.aclose()


@contextmanager
def api_processes(
    env: dict[str, str], log_dir: Path, count: int = 1, name: str = "api"
) -> Iterator[list[str]]:
    """``count`` ``homing api`` processes on ``env`` (a prepared, migrated data
    directory: they start at once), each on a port of its own; their base URLs once each
    answers. Each is stopped after, and checked to exit 0."""
    with ExitStack() as stack:
        processes: list[HomingProcess] = []
        stack.callback(_stopped, processes)
        urls = []
        for n in range(count):
            port = free_port()
            args = ["api", "--host", "127.0.0.1", "--port", str(port)]
            processes.append(HomingProcess(args, env, log_dir / f"{name}{n}.log").start())
            urls.append(f"http://127.0.0.1:{port}")
        for process, url in zip(processes, urls, strict=True):
            wait_healthy(url, START_SECONDS, f"homing api at {url}", process=process)
        yield urls


def _stopped(processes: list[HomingProcess]) -> None:
    """Each of ``processes`` stopped, all asked at once, and checked to exit 0."""
    for process, code in zip(processes, stop_together(processes, STOP_SECONDS), strict=True):
        assert code == 0, f"exit {code}: {process.output()}"
