"""The command line of ``homing``: every command, subcommand and option, and nothing
they run. It imports no service, store or web framework, so ``homing --help``, a
completion script and an argument error answer at once; each command's module is
imported when the command runs (``homing.cli``)."""

from __future__ import annotations

import argparse
from datetime import datetime

from homing.cli import completion
from homing.cli.output import add_json_flags
from homing.clock import parse_moment
from homing.models import AuditAction, Plan, Role

DESCRIPTION = (
    "``homing`` — run, api, worker, migrate, purge, reconcile, sandbox, tenant, dlq, audit, user."
)

_PLANS = [p.value for p in Plan]


def build_parser() -> argparse.ArgumentParser:
    """Every command, subcommand and option of ``homing``."""
    parser = argparse.ArgumentParser(prog="homing", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="API and workers in one process (embedded default)")
    _add_bind(run)
    run.add_argument("--demo", action="store_true", help="also start the sandbox and a demo tenant")

    api = commands.add_parser("api", help="the HTTP API only")
    _add_bind(api)
    # A child of another ``homing api``/``homing run``, joining its port (homing.cli.runner).
    api.add_argument("--joined", action="store_true", help=argparse.SUPPRESS)
    api.add_argument("--ready-fd", type=int, default=None, help=argparse.SUPPRESS)

    worker = commands.add_parser("worker", help="a delivery worker only")
    worker.add_argument("--once", action="store_true", help="drain what is claimable, then exit")
    # A child of ``homing run``: the parent's API answers the scrapes (homing.cli.runner).
    worker.add_argument("--supervised", action="store_true", help=argparse.SUPPRESS)

    commands.add_parser("migrate", help="bring the database schema up to date")

    keys = commands.add_parser("keys", help="master-key maintenance")
    keys_commands = keys.add_subparsers(dest="keys_command", required=True)
    keys_commands.add_parser(
        "rotate", help="re-seal every stored secret with HOMING_SECRET_KEY (see docs/operations.md)"
    )

    purge = commands.add_parser("purge", help="run the retention purge once, now")
    purge.add_argument("--dry-run", action="store_true", help="count what would go; change nothing")

    reconcile = commands.add_parser(
        "reconcile", help="check the ledger invariant once, now, and mend what breaks it"
    )
    reconcile.add_argument("--dry-run", action="store_true", help="count only; change nothing")

    sandbox = commands.add_parser("sandbox", help="the local provider emulator")
    sandbox.add_argument("--host", default="127.0.0.1")
    sandbox.add_argument("--port", type=int, default=8025)
    sandbox.add_argument("--smtp-port", type=int, default=2525)

    _tenant(commands.add_parser("tenant", help="manage tenants"))
    _events(commands.add_parser("events", help="inbound events"))
    _report(commands.add_parser("report", help="reports"))
    _dlq(commands.add_parser("dlq", help="the dead-letter console"))
    _audit(commands.add_parser("audit", help="the audit log"))
    _user(commands.add_parser("user", help="web console users"))
    completion.add_command(commands)
    add_json_flags(parser)
    return parser


def _add_bind(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=None, help="default: HOMING_HOST or 127.0.0.1")
    parser.add_argument("--port", type=int, default=None, help="default: HOMING_PORT or 8000")


def moment(text: str) -> datetime:
    """An ISO 8601 moment from a flag, at most 64 characters (argparse's type)."""
    try:
        if len(text) > 64:
            raise ValueError("too long")
        return parse_moment(text)
    except ValueError as refused:
        shown = text if len(text) <= 64 else text[:64] + "…"
        raise argparse.ArgumentTypeError(f"{shown!r} is no ISO 8601 moment: {refused}") from None


def _tenant(tenant: argparse.ArgumentParser) -> None:
    """The ``tenant`` subcommands."""
    sub = tenant.add_subparsers(dest="tenant_command", required=True)
    create = sub.add_parser("create", help="create a tenant and its first API key")
    create.add_argument("name")
    create.add_argument("--plan", choices=_PLANS, default=Plan.FREE.value)
    _add_limit_options(create)
    listing = sub.add_parser("list", help="list tenants, oldest first")
    listing.add_argument("--limit", type=int, default=50)
    listing.add_argument("--cursor", default=None)
    sub.add_parser("show", help="a tenant, its limits and this month's usage").add_argument("id")
    plan = sub.add_parser("set-plan", help="change a tenant's plan")
    plan.add_argument("id")
    plan.add_argument("plan", choices=_PLANS)
    limits = sub.add_parser("set-limits", help="set or clear a tenant's custom limits")
    limits.add_argument("id")
    _add_limit_options(limits)
    limits.add_argument("--plan-rate", action="store_true", help="back to the plan's rate")
    limits.add_argument("--plan-quotas", action="store_true", help="back to the plan's quotas")
    sub.add_parser("suspend", help="refuse its requests, hold its jobs").add_argument("id")
    sub.add_parser("unsuspend", help="admit it again, release its jobs").add_argument("id")


def _add_limit_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rate", type=int, default=None, help="requests a minute")
    parser.add_argument(
        "--quota",
        action="append",
        default=None,
        metavar="NAME=LIMIT",
        help="a monthly quota, e.g. webhook=5000 or email+webhook=unlimited (repeatable; "
        "replaces the tenant's custom quotas)",
    )


def _dlq(dlq: argparse.ArgumentParser) -> None:
    """The ``dlq`` subcommands and their flags."""
    commands = dlq.add_subparsers(dest="dlq_command", required=True)
    listing = commands.add_parser("list", help="dead letters, newest first")
    _add_filter(listing)
    listing.add_argument("--limit", type=int, default=50, choices=range(1, 201), metavar="N")
    listing.add_argument("--cursor", default=None)
    show = commands.add_parser("show", help="one dead letter with its payload and attempts")
    show.add_argument("id")
    for name in ("redrive", "purge"):
        bulk = commands.add_parser(name, help=f"{name} the matching dead letters")
        _add_filter(bulk)
        bulk.add_argument("--id", action="append", dest="ids", help="a dead letter id (repeat)")
        bulk.add_argument("--dry-run", action="store_true", help="count only")
        bulk.add_argument("--all", action="store_true", help="allow an empty filter")


def _add_filter(parser: argparse.ArgumentParser) -> None:
    for name in ("tenant-id", "queue", "error-class", "provider", "q"):
        parser.add_argument(f"--{name}", default=None)
    parser.add_argument("--since", type=moment, default=None)
    parser.add_argument("--until", type=moment, default=None)


def _audit(audit: argparse.ArgumentParser) -> None:
    """The ``audit`` subcommands and their flags."""
    commands = audit.add_subparsers(dest="audit_command", required=True)
    listing = commands.add_parser("list", help="audit events, newest first")
    listing.add_argument("--tenant-id", default=None)
    listing.add_argument("--action", choices=[a.value for a in AuditAction], default=None)
    listing.add_argument("--since", type=moment, default=None)
    listing.add_argument("--until", type=moment, default=None)
    listing.add_argument("--limit", type=int, default=50, choices=range(1, 201), metavar="N")
    listing.add_argument("--cursor", default=None)


def _user(user: argparse.ArgumentParser) -> None:
    """The ``user`` subcommands."""
    sub = user.add_subparsers(dest="user_command", required=True)
    add = sub.add_parser("add", help="add a console user: a tenant's member or an operator")
    add.add_argument("email")
    whom = add.add_mutually_exclusive_group(required=True)
    whom.add_argument("--tenant", help="the tenant id they are a member of")
    whom.add_argument("--operator", action="store_true", help="an operator of the platform")
    add.add_argument("--role", choices=[r.value for r in Role], default=Role.VIEWER.value)
    add.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    invite = sub.add_parser("invite", help="invite an email to a tenant; prints the link")
    invite.add_argument("--tenant", required=True, help="the tenant id to invite to")
    invite.add_argument("--email", required=True)
    invite.add_argument("--role", choices=[r.value for r in Role], default=Role.VIEWER.value)


def _events(parser: argparse.ArgumentParser) -> None:
    """``homing events reprocess [ENTRY_ID…]``."""
    commands = parser.add_subparsers(dest="events_command", required=True)
    reprocess = commands.add_parser(
        "reprocess", help="apply quarantined (and abandoned) inbound events again"
    )
    reprocess.add_argument(
        "entry_ids", nargs="*", help="journal entry ids (default: every quarantined entry)"
    )


def _report(parser: argparse.ArgumentParser) -> None:
    """``homing report events [--hours N] [--tenant ID]``."""
    commands = parser.add_subparsers(dest="report_command", required=True)
    events = commands.add_parser(
        "events", help="inbound events per hour and type: count, p95 lag, errors"
    )
    events.add_argument("--hours", type=int, default=24, help="how many hours back (default 24)")
    events.add_argument("--tenant", default=None, help="one tenant's events (default: all)")
