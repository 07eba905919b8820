"""``homing audit list``: the operator's view of the audit log from the shell.

The filters of ``/admin/v1/audit-log`` as flags; JSON on stdout, shaped like its page.
"""

from __future__ import annotations

import argparse

from homing.api.schemas.audit import AuditEventPublic
from homing.cli.output import emit
from homing.domain.audit import AuditFilter
from homing.models import AuditAction
from homing.services import Services


async def run(services: Services, args: argparse.Namespace) -> int:
    """Carry out one ``homing audit`` command and print its JSON."""
    action = AuditAction(args.action) if args.action else None
    f = AuditFilter(args.tenant_id, action, args.since, args.until)
    events, cursor = await services.audit.page(f, limit=args.limit, cursor=args.cursor)
    data = [AuditEventPublic.of(e).model_dump(mode="json") for e in events]
    return emit(args, {"data": data, "next_cursor": cursor})
