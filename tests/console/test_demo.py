"""``homing run --demo`` prints the console's address and a demo login that works."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from homing.crypto import generate_master_key
from tests.processes import HomingProcess, eventually, free_port

_LOGIN = re.compile(r"console: (http://\S+)/\nsign in as (\S+) with password (\S+) ")


async def test_the_demo_prints_a_console_login_that_signs_in(tmp_path: Path) -> None:
    port = free_port()
    env = {
        "HOMING_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'demo.db'}",
        "HOMING_DATA_DIR": str(tmp_path / "data"),
        "HOMING_SECRET_KEY": generate_master_key(),
        "HOMING_LOG_LEVEL": "warning",
    }
    demo = HomingProcess(["run", "--demo", "--port", str(port)], env, tmp_path / "demo.log")
    demo.start()
    try:

        async def printed() -> re.Match[str] | None:
            return _LOGIN.search(demo.output())

        found = await eventually(printed, what="the demo's console login")
        url, email, password = found.groups()
        assert url == f"http://127.0.0.1:{port}"

        async def answering() -> bool:
            try:
                async with httpx.AsyncClient(base_url=url) as probe:
                    return (await probe.get("/sign-in")).status_code == 200
            except httpx.TransportError:
                return False

        await eventually(answering, what="the console")
        async with httpx.AsyncClient(base_url=url) as client:
            signed = await client.post("/sign-in", data={"email": email, "password": password})
            assert signed.status_code == 303
            home = await client.get("/", follow_redirects=True)
            operator = await client.get("/operator/tenants")
    finally:
        assert demo.stop() == 0, demo.output()
    assert home.status_code == 200 and "<h1>demo</h1>" in home.text
    assert operator.status_code == 200
    assert password not in home.text
