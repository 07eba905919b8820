"""The TypeScript SDK (clients/typescript) against a real ``homing run`` and the sandbox,
over real HTTP: its node:test suite (clients/typescript/test) run by Node.js with the
server's addresses, a real webhook delivery to verify, and ``npm pack`` of the package.

The SDK is built here (``npm ci`` with the lock file when node_modules is missing or
stale, then ``tsc``), so ``./scripts/test`` alone needs only Node.js and npm."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.processes import eventually
from tests.sdk.conftest import Server
from tests.webhooks.receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "typescript"


def _run(*argv: str, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    done = subprocess.run(
        argv, cwd=SDK, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    assert done.returncode == 0, f"{' '.join(argv)}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def built() -> Path:
    """clients/typescript/dist, built from the checked-in sources with the locked packages."""
    for tool in ("node", "npm"):
        assert shutil.which(tool), f"{tool} is needed for the TypeScript SDK (.ci/run installs it)"
    lock = hashlib.sha256((SDK / "package-lock.json").read_bytes()).hexdigest()
    stamp = SDK / "node_modules" / ".homing-lock"
    if not stamp.exists() or stamp.read_text() != lock:
        _run("npm", "ci", "--no-audit", "--no-fund")
        stamp.write_text(lock)
    shutil.rmtree(SDK / "dist", ignore_errors=True)
    _run("node", "node_modules/typescript/bin/tsc", "-p", "tsconfig.json")
    return SDK / "dist"


def test_the_generated_types_and_error_classes_are_current(built: Path) -> None:
    _run("node", "generate.mjs", "--check")


async def test_the_sdk_suite_passes_against_a_real_homing(
    built: Path, server: Server, receiver: Receiver, tmp_path: Path
) -> None:
    # A real delivery for the SDK's webhook helper: a secret, a webhook to a receiver.
    headers = {"Authorization": f"Bearer {server.api_key}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=10) as http:
        secret = (await http.post("/v1/webhook-secret")).json()["secret"]
        payload = {"order": 42, "status": "paid", "note": "café"}
        queued = await http.post(
            "/v1/notifications/webhook", json={"url": receiver.url + "/hook", "payload": payload}
        )
        assert queued.status_code == 202, queued.text

    async def arrived() -> bool:
        return bool(receiver.requests)

    await eventually(arrived, what="the webhook delivery")
    delivery = receiver.requests[0]
    fixture = tmp_path / "delivery.json"
    fixture.write_text(
        json.dumps(
            {
                "secret": secret,
                "headers": delivery.headers,
                "body_base64": base64.b64encode(delivery.body).decode(),
                "payload": payload,
            }
        )
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOMING_URL": server.url,
        "HOMING_API_KEY": server.api_key,
        "HOMING_LIMITED_KEY": server.limited_key,
        "HOMING_ADMIN_TOKEN": server.admin_token,
        "HOMING_RESEND_URL": server.sandbox_provider("resend"),
        "HOMING_WEBHOOK_DELIVERY": str(fixture),
        "NO_PROXY": "*",
    }
    output = _run("node", "--test", "--test-reporter=tap", "test/", env=env)
    assert "# fail 0" in output, output
    passed = int(output.split("# pass ")[1].split()[0])
    assert passed >= 28, output


def test_npm_pack_ships_the_built_module_and_its_types(built: Path) -> None:
    listed = json.loads(_run("npm", "pack", "--dry-run", "--json"))
    files = {entry["path"] for entry in listed[0]["files"]}
    assert {"package.json", "README.md", "dist/index.js", "dist/index.d.ts"} <= files
    assert {"dist/client.js", "dist/webhooks.js", "dist/codes.js", "dist/schema.d.ts"} <= files
    assert not any(name.startswith(("src/", "test/", "node_modules/")) for name in files)


def test_both_sdks_name_every_error_code_alike(built: Path) -> None:
    from homing_client.errors import CODES

    generated = (SDK / "src" / "codes.ts").read_text()
    table = dict(re.findall(r'\["(\d{3} [a-z_]+)", (\w+)\]', generated))
    python = {f"{status} {code}": cls.__name__ for (status, code), cls in CODES.items()}
    assert table == python
