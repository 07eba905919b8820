"""``homing user add`` and ``homing user invite``: people who sign in to the web console.

``homing user add EMAIL --tenant T --role owner|viewer`` makes a member of a tenant,
``homing user add EMAIL --operator`` an operator of the platform. The password is asked
for twice at a prompt, or read as one line from standard input (``--password-stdin``),
never taken from the command line, where other users of the host could read it.
Output is one JSON object on stdout; the password is never printed.

``homing user invite --tenant T --email E --role viewer|owner`` invites an email to a
tenant (``homing.managers.invitations``): it prints the link (at HOMING_PUBLIC_URL, else
at the API's host and port) and sends it by platform email when that is configured.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from homing.cli.output import emit
from homing.errors import InvalidRequest, NotFound
from homing.managers.audit import CLI_ACTOR
from homing.models import Role
from homing.services import Services


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Again: ") != first:
        raise InvalidRequest("the two passwords differ")
    return first


async def run(services: Services, args: argparse.Namespace) -> int:
    """Carry out one ``homing user`` command and print its JSON."""
    if args.user_command == "invite":
        return await _invite(services, args)
    password = _password(args.password_stdin)
    role = None if args.operator else Role(args.role)
    user = await services.people.add_user(
        args.email,
        password,
        actor=CLI_ACTOR,
        tenant_id=args.tenant,
        role=role,
        operator=args.operator,
    )
    return emit(
        args,
        {
            "user_id": user.id,
            "email": user.email,
            "operator": user.operator,
            "tenant_id": args.tenant,
            "role": role.value if role else None,
        },
    )


async def _invite(services: Services, args: argparse.Namespace) -> int:
    tenant = await services.tenants.get(args.tenant)
    if tenant is None:
        raise NotFound("tenant not found")
    s = services.settings
    base = s.public_url or f"http://{s.server.host}:{s.server.port}"
    invited = await services.invitations.invite(
        tenant.id, tenant.name, args.email, Role(args.role), CLI_ACTOR, base
    )
    shown = {
        "invitation_id": invited.invitation_id,
        "tenant_id": tenant.id,
        "email": invited.email,
        "role": args.role,
        "link": invited.link,
        "mailed": invited.mailed,
    }
    return emit(args, shown)
