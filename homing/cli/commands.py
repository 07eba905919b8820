"""What each ``homing`` command runs, once its arguments are parsed
(``homing.cli.parser``): the settings, the services, the command's handler; and the
maintenance commands themselves (``migrate``, ``keys rotate``, ``purge``,
``reconcile``)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from pydantic import ValidationError

from homing import tracing
from homing.cli import audit_commands as audit_cli
from homing.cli import dlq_commands as dlq_cli
from homing.cli import journal as inbound_cli
from homing.cli import tenant_commands as tenant_cli
from homing.cli import user_commands as user_cli
from homing.cli.output import emit
from homing.email_headers import email_package_patched
from homing.errors import ConfigError, HomingError
from homing.logs import configure_logging
from homing.managers.audit import CLI_ACTOR
from homing.models import AuditAction
from homing.services import Services, build
from homing.settings import Settings, explained
from homing.store.migrate import require_current
from homing.store.storage import cause_of_oserror

# Only these start-ups bring the schema up to date. Every other command works on the
# schema as it is, and refuses ("run `homing migrate`") when it is not current.
_MIGRATING = frozenset({"run", "api", "worker", "migrate"})
_SERVING = frozenset({"run", "api", "worker"})
# The commands that accept and deliver, and so may be traced.
_TRACED = frozenset({"run", "api", "worker"})
# What `homing keys rotate` cannot do, said once it is done (docs/operations.md).
KEYED_HASHES_WARNING = (
    "warning: {} erased addresses and address opt-outs are kept as keyed hashes, which"
    " cannot be re-keyed without the address: those made under a previous key hold only"
    " while that key stays in HOMING_PREVIOUS_SECRET_KEYS (each moves to the new key when"
    " its address is next sent to); see docs/operations.md, Rotating the master key"
)


def run_loop(main: Coroutine[Any, Any, int]) -> int:
    """Run on uvloop where it is installed (Linux, macOS): the same asyncio, less CPU."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed command ``args``; its exit status."""
    try:
        loopback = False
        if args.command == "run" and args.demo:
            from homing.cli.demo import allow_loopback_webhooks

            loopback = allow_loopback_webhooks(os.environ)
        settings = Settings()
        configure_logging(settings.log_level)
        # The serving commands trace when the OTEL_* variables ask (docs/tracing.md);
        # each child process they start reads the same variables.
        if args.command in _TRACED:
            tracing.start_from_environment()
        return run_loop(_dispatch(args, settings, loopback))
    except KeyboardInterrupt:
        return 130
    except (ConfigError, HomingError) as exc:
        print(f"homing: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:
        # Homing's own files in the data folder (the master key, the folder itself).
        cause = cause_of_oserror(exc)
        if cause is None:
            raise
        line = f"cannot write {exc.filename}: {exc.strerror} ({cause.code})"
        print(f"homing: {line}", file=sys.stderr)
        return 2
    except ValidationError as exc:  # a HOMING_* setting out of its bounds
        for line in explained(exc):
            print(f"homing: {line}", file=sys.stderr)
        return 2
    finally:
        tracing.stop()  # exports what is recorded; nothing when tracing is off


async def _dispatch(args: argparse.Namespace, settings: Settings, loopback: bool = False) -> int:
    from homing.cli import runner

    if args.command == "sandbox":
        from homing.sandbox.server import serve_forever

        await serve_forever(args.host, args.port, args.smtp_port)
        return 0
    handlers: dict[str, Callable[[Services], Awaitable[int]]] = {
        "run": lambda s: runner.run_all(
            s, _host(args, settings), _port(args, settings), args.demo, loopback
        ),
        "api": lambda s: runner.run_api(
            s,
            _host(args, settings),
            _port(args, settings),
            joined=args.joined,
            ready_fd=args.ready_fd,
        ),
        "worker": lambda s: runner.run_worker(s, once=args.once, supervised=args.supervised),
        "migrate": _migrated,
        "keys": lambda s: _rotate_keys(s, args),
        "purge": lambda s: _purge(s, args),
        "reconcile": lambda s: _reconcile(s, args),
        "tenant": lambda s: tenant_cli.run(s, args),
        "events": lambda s: inbound_cli.run_events(s, args),
        "report": lambda s: inbound_cli.run_report(s, args),
        "dlq": lambda s: dlq_cli.run(s, args),
        "audit": lambda s: audit_cli.run(s, args),
        "user": lambda s: user_cli.run(s, args),
    }
    if args.command in _SERVING:
        _warn_of_an_unpatched_python()
    migrating = args.command in _MIGRATING
    services = await build(settings, run_migrations=migrating)
    try:
        if not migrating:
            await require_current(services.db)
        return await handlers[args.command](services)
    finally:
        await services.aclose()


def _warn_of_an_unpatched_python() -> None:
    version = sys.version_info
    if not email_package_patched((version.major, version.minor, version.micro)):
        logging.getLogger("homing").warning(
            "this Python's email package predates the CVE-2024-6923 fix; Homing encodes"
            " its own header fields, but run 3.11.10, 3.12.5 or newer (docs/deploy.md)",
            extra={"python": f"{version.major}.{version.minor}.{version.micro}"},
        )


def _host(args: argparse.Namespace, settings: Settings) -> str:
    return str(args.host or settings.server.host)


def _port(args: argparse.Namespace, settings: Settings) -> int:
    return int(args.port or settings.server.port)


async def _rotate_keys(services: Services, args: argparse.Namespace) -> int:
    from homing.managers.keyrotation import KeyRotation

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    report = await KeyRotation(services.db, services.sealer, progress).run()
    for place, count in report.resealed.items():
        print(f"{place}: {count} re-sealed", file=sys.stderr)
    if report.keyed_hashes:
        print(KEYED_HASHES_WARNING.format(report.keyed_hashes), file=sys.stderr)
    await _audit_rotation(services, report.total, report.skipped)
    return emit(
        args,
        {
            "key_id": services.sealer.current_key_id,
            "resealed": report.total,
            "already_current": report.current,
            # Changed (wiped or replaced) between the read and the write: left as is.
            "skipped": report.skipped,
            # Erased addresses and opt-outs kept as keyed hashes, which cannot be re-keyed.
            "keyed_hashes": report.keyed_hashes,
        },
    )


async def _audit_rotation(services: Services, resealed: int, skipped: int) -> None:
    """One platform-wide audit event for a finished rotation (it spans many
    transactions): the new key's id, never the key."""
    event = services.audit.event(
        CLI_ACTOR,
        AuditAction.MASTER_KEY_ROTATED,
        tenant_id=None,
        target_type="master_key",
        target_id=services.sealer.current_key_id,
        changes={"resealed": resealed, "skipped": skipped},
    )
    await services.audit.record(event)


async def _purge(services: Services, args: argparse.Namespace) -> int:
    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    report = await services.retention(progress).run(dry_run=args.dry_run)
    return emit(
        args,
        {
            "dry_run": report.dry_run,
            "jobs": report.jobs,
            "payloads": report.payloads,
            # Another worker was purging: this run stopped; run it again later.
            "locked": report.locked,
            "audit_events": report.audit_events,
            "invitations": report.invitations,
            "inbound_events": report.inbound_events,
            "notifications": report.notifications,
            "digests": report.digests,
        },
    )


async def _reconcile(services: Services, args: argparse.Namespace) -> int:
    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    report = await services.reconciler(progress).run(dry_run=args.dry_run)
    return emit(
        args,
        {
            "dry_run": report.dry_run,
            "missing_entry": report.missing_entry,
            "terminal_entry": report.terminal_entry,
            "stale_lease": report.stale_lease,
            "unaccounted": report.unaccounted,
            "mended": report.mended,
            # Another process was reconciling: this run stopped; run it again later.
            "locked": report.locked,
        },
    )


async def _migrated(_services: Services) -> int:
    print("database is up to date", file=sys.stderr)
    return 0
