"""``homing run --demo``: the console login it prints signs in; the README's walk runs as
written with the block it prints; a second demo reuses the tenant with a fresh key and
password; webhooks reach loopback during a demo (issue #29, "Five minutes that work")."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from homing.crypto import generate_master_key
from tests.processes import HomingProcess, eventually, free_port, wait_healthy
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


def _printed(demo: HomingProcess, port: int) -> Printed | None:
    """What the demo at ``port`` printed, once its console login is out; else None."""
    output = demo.output()
    found = _LOGIN.search(output)
    if found is None:
        return None
    exports_line = _EXPORTS.search(output)
    tenant = _TENANT.search(output)
    assert exports_line and tenant, output
    exports = dict(part.split("=", 1) for part in shlex.split(exports_line.group(1)))
    url, email, password = found.groups()
    assert url == exports["HOMING_URL"] == f"http://127.0.0.1:{port}"
    return Printed(
        url, email, password, exports, tenant.group(1), tenant.group(2) == "reused", output
    )


class DemoFolder:
    """``homing run --demo`` on one data folder, shared by a module's tests: started
    when first wanted, and again (a second demo on the same folder) after ``stop``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.runs = 0
        self.process: HomingProcess | None = None
        self.printed: Printed | None = None

    @property
    def current(self) -> Printed:
        """The running demo's printed block, starting one when none runs."""
        if self.process is None or self.printed is None:
            self.runs += 1
            port = free_port()
            args = ["run", "--demo", "--port", str(port)]
            log = self.folder / f"demo{self.runs}.log"
            self.process = HomingProcess(args, _env(self.folder), log).start()
            self.printed = self._wait_for(self.process, port)
        return self.printed

    @staticmethod
    def _wait_for(demo: HomingProcess, port: int) -> Printed:
        deadline = time.monotonic() + 60
        while (found := _printed(demo, port)) is None:
            assert time.monotonic() < deadline, "timed out waiting for the demo's login"
            assert demo.proc is not None and demo.proc.poll() is None, demo.output()
            time.sleep(0.05)
        wait_healthy(found.url, what="the demo's API")
        return found

    def stop(self) -> None:
        if self.process is not None:
            process, self.process, self.printed = self.process, None, None
            assert process.stop() == 0, process.output()


@pytest.fixture(scope="module")
def demos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoFolder]:
    """One demo for the module's tests that use a demo as they find it; each of them
    tells its own jobs and deliveries apart from the others'. The second-demo test
    stops it and starts the next on the same folder."""
    folder = DemoFolder(tmp_path_factory.mktemp("demo"))
    try:
        yield folder
    finally:
        folder.stop()


@pytest.fixture
def shared_demo(demos: DemoFolder) -> Printed:
    return demos.current


def _walk_commands() -> str:
    """The README walk's shell blocks after the pasted line, as written: from the first
    ``sh`` block after the ``text`` block to the paragraph that starts without --demo."""
    readme = (ROOT / "README.md").read_text()
    walk = readme.split("<!-- --8<-- [start:walk] -->")[1].split("Without `--demo`")[0]
    after_paste = walk.split("```text", 1)[1]
    blocks = re.findall(r"```sh\n(.*?)```", after_paste, flags=re.DOTALL)
    assert len(blocks) >= 2, "the walk has its commands"
    return "\n".join(blocks)


async def _jobs(client: httpx.AsyncClient, channel: str) -> list[dict[str, object]]:
    """The demo tenant's jobs on ``channel``, newest first (at most 100)."""
    found = await client.get("/v1/jobs", params={"channel": channel, "limit": 100})
    assert found.status_code == 200, found.text
    jobs: list[dict[str, object]] = found.json()["data"]
    return jobs


async def _sign_in(url: str, email: str, password: str) -> int:
    async with httpx.AsyncClient(base_url=url) as client:
        signed = await client.post("/sign-in", data={"email": email, "password": password})
        return signed.status_code


async def test_the_demo_prints_a_console_login_that_signs_in(shared_demo: Printed) -> None:
    demo = shared_demo
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


async def test_the_readme_walk_runs_as_written_with_the_printed_block(
    shared_demo: Printed,
) -> None:
    demo = shared_demo
    script = "set -euo pipefail\n" + _walk_commands() + '\necho "WALK_ID=$ID"\n'
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "NO_PROXY": "*",
        **demo.exports,
    }
    headers = {"Authorization": f"Bearer {demo.exports['KEY']}"}
    async with httpx.AsyncClient(base_url=demo.url, headers=headers) as client:
        # The demo is shared: the walk's jobs are those that were not there before it.
        earlier = {j["id"] for j in await _jobs(client, "email") + await _jobs(client, "webhook")}
        done = subprocess.run(
            ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        job_id = done.stdout.rsplit("WALK_ID=", 1)[1].strip()

        async def fell_back() -> dict[str, object] | None:
            job: dict[str, object] = (await client.get(f"/v1/jobs/{job_id}")).json()
            return job if job["status"] == "COMPLETED" else None

        job = await eventually(fell_back, what="the second walk email to complete")
        first = [j for j in await _jobs(client, "email") if j["id"] not in earlier]

        async def hook_delivered() -> list[dict[str, object]] | None:
            jobs = [j for j in await _jobs(client, "webhook") if j["id"] not in earlier]
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
    demos: DemoFolder,
) -> None:
    first = demos.current
    assert not first.reused, "the first demo on its folder"
    demos.stop()
    second = demos.current
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
        assert all(p["config"]["base_url"].startswith(second.exports["SANDBOX"]) for p in providers)
    assert await _sign_in(second.url, second.email, second.password) == 303
    assert await _sign_in(second.url, first.email, first.password) != 303, "old password"
    assert "reused" in second.output and first.password not in second.output


async def test_webhooks_reach_loopback_during_a_demo(
    shared_demo: Printed, receiver: Receiver
) -> None:
    demo = shared_demo
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
    shared_demo: Printed,
) -> None:
    """Nothing configured: the printed block names the sandbox's receiver, and the
    console's Send a test delivers a webhook there (issue #28, item 2)."""
    demo = shared_demo
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
            # The demo is shared (the README walk posts there too): this test's event.
            return [h for h in found if h["headers"]["x-webhook-event"] == "demo.ping"]  # type: ignore[index]

        [hook] = await eventually(arrived, what="the demo's webhook at the sandbox")
    assert hook["body"] == '{"hello":"demo"}'
