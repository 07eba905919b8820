"""``homing events …`` and ``homing report events``: the operator's side of the journal."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from homing.api.schemas.delivery_events import EventReportRow
from homing.cli.output import emit, wants_json

if TYPE_CHECKING:
    from homing.services import Services


def add_events_commands(parser: argparse.ArgumentParser) -> None:
    """``homing events reprocess [ENTRY_ID…]``."""
    commands = parser.add_subparsers(dest="events_command", required=True)
    reprocess = commands.add_parser(
        "reprocess", help="apply quarantined (and abandoned) inbound events again"
    )
    reprocess.add_argument(
        "entry_ids", nargs="*", help="journal entry ids (default: every quarantined entry)"
    )


def add_report_commands(parser: argparse.ArgumentParser) -> None:
    """``homing report events [--hours N] [--tenant ID]``."""
    commands = parser.add_subparsers(dest="report_command", required=True)
    events = commands.add_parser(
        "events", help="inbound events per hour and type: count, p95 lag, errors"
    )
    events.add_argument("--hours", type=int, default=24, help="how many hours back (default 24)")
    events.add_argument("--tenant", default=None, help="one tenant's events (default: all)")


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
