"""``homing events …`` and ``homing report events``: the operator's side of the journal."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from homing.api.schemas.delivery_events import EventReportRow
from homing.cli.output import emit, wants_json

if TYPE_CHECKING:
    from homing.services import Services


async def run_events(services: Services, args: argparse.Namespace) -> int:
    """Reprocess, printing what became of the entries as JSON."""
    summary = await services.inbound.receiver.reprocess(args.entry_ids)
    return emit(args, summary.as_dict())


async def run_report(services: Services, args: argparse.Namespace) -> int:
    """Print the events report as JSON lines, one per hour and type."""
    if args.hours < 1:
        print("homing: --hours must be at least 1", file=sys.stderr)
        return 2
    rows = [EventReportRow.of(r) for r in await services.inbound.report(args.hours, args.tenant)]
    if wants_json(args):  # JSON lines, one per hour and type
        for row in rows:
            print(row.model_dump_json())
        return 0
    return emit(args, {"data": [row.model_dump(mode="json") for row in rows]})
