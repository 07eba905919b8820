"""``homing dlq list|show|redrive|purge``: the admin dead-letter console from the shell.

Same filters as ``/admin/v1/dead-letters`` as flags; JSON on stdout; redrive and purge
print their progress on stderr after every batch.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import Any

from homing.cli.output import emit
from homing.domain.dead_letters import DeadLetterFilter
from homing.managers.audit import CLI_ACTOR
from homing.managers.dead_letters import MAX_IDS, BulkResult
from homing.models import AuditAction
from homing.services import Services


def _filter(args: argparse.Namespace) -> DeadLetterFilter:
    return DeadLetterFilter(
        tenant_id=args.tenant_id,
        queue=args.queue,
        error_class=args.error_class,
        provider=args.provider,
        since=args.since,
        until=args.until,
        q=args.q,
    )


async def run(services: Services, args: argparse.Namespace) -> int:
    """Carry out one ``homing dlq`` command and print its JSON."""
    command = args.dlq_command
    if command == "list":
        rows, cursor = await services.dead_letter_store.page(
            _filter(args), limit=args.limit, cursor=args.cursor
        )
        return emit(args, {"data": [_plain(r, payload=False) for r in rows], "next_cursor": cursor})
    if command == "show":
        letter = await services.dead_letter_store.get(None, args.id)
        _, attempts = await services.jobs.get(letter.tenant_id, letter.job_id)
        shown = _plain(letter, payload=True)
        shown["attempts"] = [_json(dataclasses.asdict(a)) for a in attempts]
        return emit(args, shown)
    return await _bulk(services, args)


async def _bulk(services: Services, args: argparse.Namespace) -> int:
    f = _filter(args)
    ids: Sequence[str] | None = args.ids
    if ids is not None and len(ids) > MAX_IDS:
        print(f"homing: at most {MAX_IDS} ids at once", file=sys.stderr)
        return 2
    if ids is None and f.is_empty() and f.tenant_id is None and not args.all:
        print("homing: give a filter or --id, or --all for every dead letter", file=sys.stderr)
        return 2
    console = services.dead_letters
    action = console.redrive if args.dlq_command == "redrive" else console.purge
    result = await action(f, ids, dry_run=args.dry_run, progress=_progress)
    done = "redriven" if args.dlq_command == "redrive" else "purged"
    if result.done and not args.dry_run:
        await _audited(services, args, f, ids, {done: result.done})
    answer: dict[str, int] = {"matched": result.matched, done: result.done}
    if args.dlq_command == "redrive":
        answer["refused"] = result.refused
        # Their message may already have reached the provider: a redrive may send twice.
        answer["uncertain"] = result.uncertain
    return emit(args, answer)


async def _audited(
    services: Services,
    args: argparse.Namespace,
    f: DeadLetterFilter,
    ids: Sequence[str] | None,
    done: dict[str, int],
) -> None:
    redrive = args.dlq_command == "redrive"
    action = AuditAction.DEAD_LETTERS_REDRIVEN if redrive else AuditAction.DEAD_LETTERS_PURGED
    shown = {k: v for k, v in dataclasses.asdict(f).items() if v is not None}
    changes = {"filter": shown, "ids": None if ids is None else len(ids), **done}
    event = services.audit.event(
        CLI_ACTOR, action, tenant_id=f.tenant_id, target_type="dead_letters", changes=changes
    )
    await services.audit.record(event)


def _progress(result: BulkResult) -> None:
    print(f"matched {result.matched}, done {result.done}", file=sys.stderr, flush=True)


def _plain(letter: Any, *, payload: bool) -> dict[str, Any]:
    shown = _json(dataclasses.asdict(letter))
    if not payload:
        del shown["payload"]
    elif shown["payload"].get("headers_sealed"):
        shown["payload"]["headers_sealed"] = "[sealed]"
    return shown


def _json(value: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(value, default=str))
    return loaded
