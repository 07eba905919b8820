"""``homing run --demo``: the sandbox on 8025 (or a free port), a demo tenant wired to it,
and one block to paste into another shell.

The demo tenant is made once per data folder and reused after (its id is kept in
``HOMING_DATA_DIR/demo-tenant``, nothing secret): each run issues it a fresh API key,
points its providers at this run's sandbox, and gives the console's demo user a fresh
password, so the printed block works every time. Webhooks may go to loopback during a
demo (``HOMING_WEBHOOK_ALLOWED_NETWORKS`` defaults to 127.0.0.0/8 and ::1 then), so a
receiver on this machine gets them: the sandbox's own (``/hooks/{name}``, listed at
``/_sandbox/hooks``) works with nothing to set up, and the printed block shows a send.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from homing.channels import Channel
from homing.errors import Conflict, NotFound
from homing.managers.accounts import NewProvider
from homing.managers.audit import CLI_ACTOR
from homing.models import Plan, Role, Tenant
from homing.sandbox.server import SandboxServer
from homing.services import Services
from homing.vendors import VENDORS

SANDBOX_PORT = 8025  # the sandbox's port in the docs (MailHog's, Mailpit's)
SANDBOX_SMTP_PORT = 2525
LOOPBACK = "127.0.0.0/8,::1/128"
DEMO_EMAIL = "demo@example.com"
_STATE_FILE = "demo-tenant"
# Email providers of the demo tenant, in priority order (the walk makes the first fail):
# the vendors whose descriptor gives them a ``demo`` place.
_PROVIDERS = tuple(
    v.name for v in sorted(VENDORS.values(), key=lambda v: v.demo or 0) if v.demo is not None
)


def allow_loopback_webhooks(environ: dict[str, str] | os._Environ[str]) -> bool:
    """Let a demo's webhooks reach loopback unless the operator chose networks: set in
    the environment before the settings are read, so worker children inherit it."""
    if environ.get("HOMING_WEBHOOK_ALLOWED_NETWORKS"):
        return False
    environ["HOMING_WEBHOOK_ALLOWED_NETWORKS"] = LOOPBACK
    return True


async def start_sandbox(host: str) -> tuple[SandboxServer, bool]:
    """The sandbox on 8025 and its mail sink on 2525 when both are free, else on free
    ports; True when it got the documented ports."""
    sandbox = SandboxServer(host=host, port=SANDBOX_PORT, smtp_port=SANDBOX_SMTP_PORT)
    try:
        await sandbox.start()
        return sandbox, True
    except OSError:
        sandbox = SandboxServer(host=host, port=0, smtp_port=0)
        await sandbox.start()
        return sandbox, False


@dataclass(frozen=True)
class Demo:
    tenant: Tenant
    api_key: str
    reused: bool
    email: str
    password: str


async def prepare(services: Services, sandbox: SandboxServer) -> Demo:
    """The demo tenant (made, or found again), a fresh key, providers on this sandbox,
    and a console login with a fresh password."""
    state = Path(services.settings.data_dir) / _STATE_FILE
    tenant = await _known_tenant(services, state)
    reused = tenant is not None
    if tenant is None:
        tenant, api_key = await services.tenants.create("demo", Plan.STARTUP)
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(tenant.id + "\n")
    else:
        _, api_key = await services.keys.issue(tenant.id, "demo")
    await _point_providers(services, tenant.id, sandbox)
    email, password = await _login(services, tenant.id)
    return Demo(tenant, api_key, reused, email, password)


async def _known_tenant(services: Services, state: Path) -> Tenant | None:
    try:
        tenant_id = state.read_text().strip()
    except OSError:
        return None
    if not tenant_id or len(tenant_id) > 64:
        return None
    return await services.tenants.get(tenant_id)


async def _point_providers(services: Services, tenant_id: str, sandbox: SandboxServer) -> None:
    """The demo's email providers, registered once, their ``base_url`` on this sandbox."""
    present = {a.vendor: a for a in await services.providers.all(tenant_id, Channel.EMAIL)}
    for priority, provider in enumerate(_PROVIDERS, start=1):
        base_url = sandbox.provider_base_url(provider)
        account = present.get(provider)
        if account is None:
            await services.accounts.register(
                NewProvider(
                    tenant_id=tenant_id,
                    channel=Channel.EMAIL,
                    provider=provider,
                    credentials={"api_key": f"{provider}-demo-key-0000"},
                    config={"base_url": base_url},
                    priority=priority,
                )
            )
        elif account.config.get("base_url") != base_url:
            config = {**account.config, "base_url": base_url}
            await services.providers.update(tenant_id, account.id, config=config)


async def _login(services: Services, tenant_id: str) -> tuple[str, str]:
    """``demo@example.com`` with a fresh password, owner of the demo tenant and an
    operator: added the first time, its password set again after."""
    password = secrets.token_urlsafe(12)
    try:
        await services.people.add_user(
            DEMO_EMAIL,
            password,
            actor=CLI_ACTOR,
            tenant_id=tenant_id,
            role=Role.OWNER,
            operator=True,
        )
    except Conflict:
        user = await services.people.user(DEMO_EMAIL)
        if user is None:
            raise NotFound("the demo user vanished") from None
        if not user.operator or await services.people.membership(user, tenant_id) is None:
            # Someone else's account with the demo's address: never take it over.
            raise Conflict(
                f"{DEMO_EMAIL} is a user of this Homing that is not the demo's; "
                "run the demo on its own data folder (HOMING_DATA_DIR)"
            ) from None
        await services.people.reset_password(user, password, actor=CLI_ACTOR)
    return DEMO_EMAIL, password


def announce(
    demo: Demo, api_url: str, sandbox: SandboxServer, documented_port: bool, loopback: bool
) -> None:
    """What to paste, where the console and the sandbox are: on stdout, once."""
    exports = (
        f"export HOMING_URL={shlex.quote(api_url)} KEY={shlex.quote(demo.api_key)} "
        f"SANDBOX={shlex.quote(sandbox.base_url)}"
    )
    body = json.dumps(
        {"to": "ada@example.com", "from": "demo@example.com", "subject": "Hi", "text": "It works"}
    )
    curl = (
        'curl -s "$HOMING_URL/v1/notifications/email" -H "Authorization: Bearer $KEY" '
        f"-H 'Content-Type: application/json' -d {shlex.quote(body)}"
    )
    where = (
        f"sandbox: {sandbox.base_url} (SMTP on port {sandbox.smtp_port})"
        if documented_port
        else f"sandbox: {sandbox.base_url} (port {SANDBOX_PORT} was taken; SMTP on port "
        f"{sandbox.smtp_port})"
    )
    lines = [
        f"demo tenant {demo.tenant.id} ({'reused' if demo.reused else 'new'}), "
        f"with {' and '.join(VENDORS[name].title for name in _PROVIDERS)} on the sandbox",
        where,
        "paste this into another shell (the API key is shown once):",
        "",
        f"  {exports}",
        "",
        "then send an email:",
        f"  {curl}",
    ]
    if loopback:
        hook = json.dumps(
            {"url": f"{sandbox.base_url}/hooks/demo", "event_type": "demo.ping", "payload": {}}
        )
        lines += [
            "or a webhook, to the sandbox's receiver (what arrived: $SANDBOX/_sandbox/hooks):",
            '  curl -s "$HOMING_URL/v1/notifications/webhook" -H "Authorization: Bearer $KEY" '
            f"-H 'Content-Type: application/json' -d {shlex.quote(hook)}",
            "webhooks may go to 127.0.0.1 and ::1 during the demo",
        ]
    lines += [
        f"console: {api_url}/",
        f"sign in as {demo.email} with password {demo.password} (shown once; "
        "an owner of the demo tenant and an operator)",
    ]
    print("\n".join(lines), file=sys.stdout, flush=True)
