"""``homing audit list``: the operator's view of the audit log from the shell.

The filters of ``/admin/v1/audit-log`` as flags; JSON on stdout, shaped like its page.
"""

from __future__ import annotations

import argparse

from homing.api.schemas.audit import AuditEventPublic
from homing.cli.dlq_commands import moment
from homing.cli.output import emit
from homing.models import AuditAction
from homing.services import Services
from homing.store.audit import AuditFilter


def add_commands(audit: argparse.ArgumentParser) -> None:
    """The ``audit`` subcommands and their flags."""
    commands = audit.add_subparsers(dest="audit_command", required=True)
    listing = commands.add_parser("list", help="audit events, newest first")
    listing.add_argument("--tenant-id", default=None)
    listing.add_argument("--action", choices=[a.value for a in AuditAction], default=None)
    listing.add_argument("--since", type=moment, default=None)
    listing.add_argument("--until", type=moment, default=None)
    listing.add_argument("--limit", type=int, default=50, choices=range(1, 201), metavar="N")
    listing.add_argument("--cursor", default=None)


async def run(services: Services, args: argparse.Namespace) -> int:
    """Carry out one ``homing audit`` command and print its JSON."""
    action = AuditAction(args.action) if args.action else None
    f = AuditFilter(args.tenant_id, action, args.since, args.until)
    events, cursor = await services.audit.page(f, limit=args.limit, cursor=args.cursor)
    data = [AuditEventPublic.of(e).model_dump(mode="json") for e in events]
    return emit(args, {"data": data, "next_cursor": cursor})
