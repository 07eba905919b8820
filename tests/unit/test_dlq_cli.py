"""``homing dlq …``: list, show, redrive (dry run first) and purge from the shell."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from homing.api.app import create_app
from homing.cli import main
from homing.models import Plan
from homing.services import build
from homing.settings import Settings
from tests.conftest import TenantClient
from tests.dead_letter_helpers import dead_letter
from tests.fixtures import migrated_cli_env


@pytest.fixture(autouse=True)
def _env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    migrated_cli_env(monkeypatch, tmp_path, capsys, clear=("HOMING_ADMIN_TOKEN",))


async def _dead_letters(count: int, provider: str) -> tuple[str, list[str]]:
    services = await build(Settings())
    try:
        tenant, key = await services.tenants.create("acme", Plan.STARTUP)
        transport = httpx.ASGITransport(app=create_app(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as api:
            client = TenantClient(api, tenant.id, key)
            ids = [await dead_letter(services, client, provider=provider) for _ in range(count)]
        return tenant.id, ids
    finally:
        await services.aclose()


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main(["dlq", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_list_show_redrive_and_purge(capsys: pytest.CaptureFixture[str]) -> None:
    tenant_id, ids = asyncio.run(_dead_letters(3, "ses"))
    listed = _run(capsys, "list", "--provider", "ses", "--tenant-id", tenant_id)
    assert [d["id"] for d in listed["data"]] == list(reversed(ids))
    assert _run(capsys, "list", "--provider", "postmark")["data"] == []
    shown = _run(capsys, "show", ids[0])
    assert shown["payload"] == {"subject": "Welcome"} and shown["attempts"] == []
    dry = _run(capsys, "redrive", "--provider", "ses", "--dry-run")
    assert dry == {"matched": 3, "redriven": 0, "refused": 0, "uncertain": 0}
    assert _run(capsys, "redrive", "--provider", "ses") == {
        "matched": 3,
        "redriven": 3,
        "refused": 0,
        "uncertain": 0,
    }
    assert _run(capsys, "redrive", "--provider", "ses")["matched"] == 0
    assert main(["dlq", "purge", "--id", ids[0]]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out) == {"matched": 1, "purged": 1}
    assert "matched 1, done 1" in printed.err  # progress, after each batch
    assert _run(capsys, "purge", "--all") == {"matched": 2, "purged": 2}


def test_bulk_without_a_filter_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dlq", "purge"]) == 2
    assert "--all" in capsys.readouterr().err


@pytest.mark.parametrize(
    "since", ["yesterday", "0001-01-01T00:00:00+01:00", "2026-01-01" + "0" * 500]
)
def test_a_bad_or_overflowing_moment_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], since: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["dlq", "list", "--since", since])
    assert exited.value.code == 2
    printed = capsys.readouterr().err
    assert "no ISO 8601 moment" in printed and len(printed) < 1_000


def test_a_moment_without_an_offset_is_utc(capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(_dead_letters(1, "ses"))
    assert _run(capsys, "list", "--since", "2000-01-01T00:00:00")["data"] != []
    assert _run(capsys, "list", "--since", "9998-01-01T00:00:00")["data"] == []
