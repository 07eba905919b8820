"""``homing run --demo``: the console login it prints signs in; the README's walk runs as
written with the block it prints; a second demo reuses the tenant with a fresh key and
password; webhooks reach loopback during a demo (issue #29, "Five minutes that work")."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from homing.crypto import generate_master_key
from tests.processes import HomingProcess, eventually, free_port
from tests.webhooks.receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]
_LOGIN = re.compile(r"console: (http://\S+)/\nsign in as (\S+) with password (\S+) ")
_EXPORTS = re.compile(r"^  export (HOMING_URL=\S+ KEY=\S+ SANDBOX=\S+)$", re.MULTILINE)
_TENANT = re.compile(r"^demo tenant (\S+) \((new|reused)\)", re.MULTILINE)


@dataclass(frozen=True)
class Printed:
    url: str
    email: str
    password: str
    exports: dict[str, str]
    tenant_id: str
    reused: bool
    output: str


def _env(folder: Path) -> dict[str, str]:
    return {
        "HOMING_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'demo.db'}",
        "HOMING_DATA_DIR": str(folder / "data"),
        "HOMING_SECRET_KEY": (folder / "key").read_text()
        if (folder / "key").exists()
        else _new_key(folder),
        "HOMING_LOG_LEVEL": "warning",
    }


def _new_key(folder: Path) -> str:
    key = generate_master_key()
    (folder / "key").write_text(key)
    return key


@asynccontextmanager
async def demo_running(folder: Path, name: str) -> AsyncIterator[Printed]:
    port = free_port()
    demo = HomingProcess(["run", "--demo", "--port", str(port)], _env(folder), folder / name)
    demo.start()
    try:

        async def printed() -> re.Match[str] | None:
            return _LOGIN.search(demo.output())

        found = await eventually(printed, what="the demo's console login")
        output = demo.output()
        exports_line = _EXPORTS.search(output)
        tenant = _TENANT.search(output)
        assert exports_line and tenant, output
        exports = dict(part.split("=", 1) for part in shlex.split(exports_line.group(1)))
        url, email, password = found.groups()
        assert url == exports["HOMING_URL"] == f"http://127.0.0.1:{port}"

        async def answering() -> bool:
            try:
                async with httpx.AsyncClient(base_url=url) as probe:
                    return (await probe.get("/healthz")).status_code == 200
            except httpx.TransportError:
                return False

        await eventually(answering, what="the demo's API")
        yield Printed(
            url, email, password, exports, tenant.group(1), tenant.group(2) == "reused", output
        )
    finally:
        assert demo.stop() == 0, demo.output()


def _walk_commands() -> str:
    """The README walk's shell blocks after the pasted line, as written: from the first
    ``sh`` block after the ``text`` block to the paragraph that starts without --demo."""
    readme = (ROOT / "README.md").read_text()
    walk = readme.split("<!-- --8<-- [start:walk] -->")[1].split("Without `--demo`")[0]
    after_paste = walk.split("```text", 1)[1]
    blocks = re.findall(r"```sh\n(.*?)```", after_paste, flags=re.DOTALL)
    assert len(blocks) >= 2, "the walk has its commands"
    return "\n".join(blocks)


async def _sign_in(url: str, email: str, password: str) -> int:
    async with httpx.AsyncClient(base_url=url) as client:
        signed = await client.post("/sign-in", data={"email": email, "password": password})
        return signed.status_code


async def test_the_demo_prints_a_console_login_that_signs_in(tmp_path: Path) -> None:
    async with demo_running(tmp_path, "demo.log") as demo:
        async with httpx.AsyncClient(base_url=demo.url) as client:
            signed = await client.post(
                "/sign-in", data={"email": demo.email, "password": demo.password}
            )
            assert signed.status_code == 303
            home = await client.get("/", follow_redirects=True)
            operator = await client.get("/operator/tenants")
    assert home.status_code == 200 and "<h1>demo</h1>" in home.text
    assert operator.status_code == 200
    assert demo.password not in home.text


async def test_the_readme_walk_runs_as_written_with_the_printed_block(tmp_path: Path) -> None:
    script = "set -euo pipefail\n" + _walk_commands() + '\necho "WALK_ID=$ID"\n'
    async with demo_running(tmp_path, "demo.log") as demo:
        env = {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "NO_PROXY": "*",
            **demo.exports,
        }
        done = subprocess.run(
            ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        job_id = done.stdout.rsplit("WALK_ID=", 1)[1].strip()
        headers = {"Authorization": f"Bearer {demo.exports['KEY']}"}
        async with httpx.AsyncClient(base_url=demo.url, headers=headers) as client:

            async def fell_back() -> dict[str, object] | None:
                job: dict[str, object] = (await client.get(f"/v1/jobs/{job_id}")).json()
                return job if job["status"] == "COMPLETED" else None

            job = await eventually(fell_back, what="the second walk email to complete")
            params = {"limit": 5, "channel": "email"}
            first = (await client.get("/v1/jobs", params=params)).json()["data"]

            async def hook_delivered() -> list[dict[str, object]] | None:
                found = await client.get("/v1/jobs", params={"channel": "webhook"})
                jobs: list[dict[str, object]] = found.json()["data"]
                return jobs if [j["status"] for j in jobs] == ["COMPLETED"] else None

            await eventually(hook_delivered, what="the walk's webhook to be delivered")
    assert job["provider"] == "sendgrid"
    attempts = job["attempts"]
    assert isinstance(attempts, list)
    assert [(a["provider"], a["outcome"]) for a in attempts] == [
        ("resend", "transient"),
        ("sendgrid", "success"),
    ]
    assert [j["status"] for j in first] == ["COMPLETED", "COMPLETED"], "both walk emails"
    assert '"provider":"sendgrid"' in done.stdout.replace(" ", ""), "the walk showed it"
    # The walk's webhook went to the sandbox's receiver with nothing set up (the
    # receiver's listing is checked by the console's demo test below).


async def test_a_second_demo_reuses_its_tenant_with_a_fresh_key_and_password(
    tmp_path: Path,
) -> None:
    async with demo_running(tmp_path, "first.log") as first:
        assert not first.reused
    async with demo_running(tmp_path, "second.log") as second:
        assert second.reused and second.tenant_id == first.tenant_id
        assert second.exports["KEY"] != first.exports["KEY"]
        assert (second.email, second.password) != (first.email, first.password)
        for key in (first.exports["KEY"], second.exports["KEY"]):
            async with httpx.AsyncClient(
                base_url=second.url, headers={"Authorization": f"Bearer {key}"}
            ) as client:
                providers = (await client.get("/v1/providers")).json()["data"]
            # Still two providers, pointed at this run's sandbox (on whatever port it got).
            assert [p["provider"] for p in providers] == ["resend", "sendgrid"]
            assert all(
                p["config"]["base_url"].startswith(second.exports["SANDBOX"]) for p in providers
            )
        assert await _sign_in(second.url, second.email, second.password) == 303
        assert await _sign_in(second.url, first.email, first.password) != 303, "old password"
    assert "reused" in second.output and first.password not in second.output


async def test_webhooks_reach_loopback_during_a_demo(tmp_path: Path, receiver: Receiver) -> None:
    async with demo_running(tmp_path, "demo.log") as demo:
        assert "webhooks may go to 127.0.0.1" in demo.output
        headers = {"Authorization": f"Bearer {demo.exports['KEY']}"}
        async with httpx.AsyncClient(base_url=demo.url, headers=headers) as client:
            queued = await client.post(
                "/v1/notifications/webhook",
                json={"url": receiver.url + "/hook", "payload": {"demo": True}},
            )
            assert queued.status_code == 202, queued.text

            async def arrived() -> bool:
                return bool(receiver.requests)

            await eventually(arrived, what="the demo's webhook at the loopback receiver")
    assert receiver.requests[0].body == b'{"demo":true}'


def test_every_curl_in_the_docs_uses_the_walks_variables_and_a_content_type() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    problems = []
    for page in pages:
        text = page.read_text()
        for command in re.findall(r"(?:^|\$\()\s*curl [^\n]*(?:\\\n[^\n]*)*", text, re.M):
            where = f"{page.name}: {command.strip()[:70]}"
            if re.search(r"(localhost|127\.0\.0\.1):(8000|8025)", command.split(" -d ")[0]):
                problems.append(f"{where}: a literal address, not $HOMING_URL/$SANDBOX")
            if re.search(r"\s(-d|--data)\s", command) and "Content-Type" not in command:
                problems.append(f"{where}: a body without its Content-Type")
    assert not problems, "\n".join(problems)


async def test_a_demo_webhook_test_from_the_console_arrives_at_the_sandbox_receiver(
    tmp_path: Path,
) -> None:
    """Nothing configured: the printed block names the sandbox's receiver, and the
    console's Send a test delivers a webhook there (issue #28, item 2)."""
    async with demo_running(tmp_path, "demo.log") as demo:
        sandbox = demo.exports["SANDBOX"]
        assert f"{sandbox}/hooks/demo" in demo.output
        async with httpx.AsyncClient(base_url=demo.url) as client:
            signed = await client.post(
                "/sign-in", data={"email": demo.email, "password": demo.password}
            )
            assert signed.status_code == 303
            where = f"/t/{demo.tenant_id}/send-test"
            page = await client.get(where + "?channel=webhook")
            csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', page.text)
            assert page.status_code == 200 and csrf, page.text
            form = {
                "csrf": csrf.group(1),
                "channel": "webhook",
                "url": f"{sandbox}/hooks/demo",
                "event_type": "demo.ping",
                "payload": '{"hello": "demo"}',
            }
            sent = await client.post(where, data=form)
            assert sent.status_code == 303, sent.text
        async with httpx.AsyncClient(base_url=sandbox) as probe:

            async def arrived() -> list[dict[str, object]]:
                found: list[dict[str, object]] = (
                    await probe.get("/_sandbox/hooks", params={"name": "demo"})
                ).json()
                return found

            [hook] = await eventually(arrived, what="the demo's webhook at the sandbox")
    assert hook["body"] == '{"hello":"demo"}'
    assert hook["headers"]["x-webhook-event"] == "demo.ping"  # type: ignore[index]
