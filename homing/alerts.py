"""Operator alerts: a log line for each, and batched messages with counts, to the
operator's chat webhook and email.

One alerter for every alert Homing raises: a dead-lettered job (the worker), an inbound
event that came again with a different body, and a message a provider accepted and then
dropped (the inbound receiver); the conditions on missing signals (``fire`` and
``resolve``, raised by ``homing.managers.alert_checks``: a queue not draining, no worker
progress, a provider failing, inbound lag or quarantine, a dead-letter spike); and what
the reconciler finds (``report``). Each is logged at once (no secret, no body); with
HOMING_ALERT_SLACK_WEBHOOK_URL set, the alerts of one HOMING_ALERT_BATCH_SECONDS window
go out as one message to that incoming webhook (``{"text"}``, emoji by shortcode) that
counts them by kind, so a spike of failures is one message, not one per job, and a slow
webhook never delays the worker or a provider's request. With an email sender
(``email_with``: HOMING_ALERT_EMAIL by platform email) the same batch is one email too,
except the dead letters of Homing's own mail, which would otherwise alert by the very
mail that fails. The webhook URL is the operator's, not a
provider endpoint: its client is the unguarded one ``homing.services`` builds for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

import httpx

__all__ = ["Alerter", "DeadLetterAlert", "EmailAlert"]

log = logging.getLogger("homing.alerts")
inbound_log = logging.getLogger("homing.inbound")

_SAMPLE: Final = 5
# Headline of each kind of alert in a webhook message, by count.
_DEAD_LETTER: Final = ":rotating_light: Homing dead-lettered {count} {noun}."
_CONFLICT: Final = (
    ":warning: Homing received {count} inbound {noun} again with a different body; "
    "kept and not applied."
)
_DROPPED: Final = ":warning: Providers report {count} accepted {noun} not sent."
_FIRING: Final = ":red_circle: Homing {noun} firing ({count}):"
_RESOLVED: Final = ":white_check_mark: Homing {noun} resolved ({count}):"
_NOUNS: Final = {
    _DEAD_LETTER: "job",
    _CONFLICT: "event",
    _DROPPED: "message",
    _FIRING: "alert",
    _RESOLVED: "alert",
}
# A condition's key and a reconciler check's name: bounded, one line.
MAX_KEY: Final = 200
MAX_DETAIL: Final = 500

# Sends one alert email: (subject, text).
EmailAlert = Callable[[str, str], Awaitable[None]]


def _line(text: str, limit: int) -> str:
    return " ".join(text[: limit * 2].split())[:limit]


@dataclass(frozen=True, slots=True)
class DeadLetterAlert:
    """A job that failed for good: its id, failure class and (safe) error detail."""

    job_id: str
    error_class: str
    error: str
    # The job's tenant: the platform tenant's dead letters are not emailed.
    tenant_id: str | None = None


class Alerter:
    """Logs each alert and sends each batch of them to the operator's webhook as one
    counted message."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        webhook_url: str | None,
        batch_seconds: float,
    ) -> None:
        self._http = http
        self._webhook_url = webhook_url
        self._batch_seconds = batch_seconds
        self._pending: list[tuple[str, str, bool]] = []  # (headline, sample line, email)
        self._timer: asyncio.Task[None] | None = None
        self._email: EmailAlert | None = None
        self._quiet_tenant: str | None = None
        self._reported: set[str] = set()  # reconciler checks with findings, last report

    def email_with(self, send: EmailAlert, quiet_tenant: str | None = None) -> None:
        """Also send each batch by email with ``send``; dead letters of ``quiet_tenant``
        (the platform tenant) stay out of the email."""
        self._email = send
        self._quiet_tenant = quiet_tenant

    def dead_letter(self, alert: DeadLetterAlert) -> None:
        """Record a dead-lettered job: logged now, sent with its batch."""
        log.warning(
            "job dead-lettered",
            extra={"job_id": alert.job_id, "error_class": alert.error_class, "error": alert.error},
        )
        line = f"• {alert.job_id} ({alert.error_class}): {alert.error[:200]}"
        quiet = alert.tenant_id is not None and alert.tenant_id == self._quiet_tenant
        self._queue(_DEAD_LETTER, line, email=not quiet)

    def conflict(self, source: str, account_id: str, event_id: str) -> None:
        """The same inbound event id arrived with a different body: kept, not applied."""
        inbound_log.warning(
            "inbound event conflict: same event id, different body",
            extra={"source": source, "provider_account_id": account_id, "event_id": event_id},
        )
        self._queue(_CONFLICT, f"• {source} event {event_id} (account {account_id or 'billing'})")

    def provider_failed(self, source: str, job_id: str, vendor_type: str) -> None:
        """A provider accepted a message and then did not send it."""
        inbound_log.warning(
            "provider reports a message it accepted was not sent",
            extra={"source": source, "job_id": job_id, "vendor_type": vendor_type},
        )
        self._queue(_DROPPED, f"• {source}: job {job_id} ({vendor_type})")

    def fire(self, key: str, detail: str) -> None:
        """A condition started: logged now, sent with its batch as "firing"."""
        key, detail = _line(key, MAX_KEY), _line(detail, MAX_DETAIL)
        log.error("alert firing", extra={"alert": key, "detail": detail})
        self._queue(_FIRING, f"• {key}: {detail}")

    def resolve(self, key: str, detail: str = "") -> None:
        """A condition that fired has cleared: logged, sent with its batch as "resolved"."""
        key, detail = _line(key, MAX_KEY), _line(detail, MAX_DETAIL)
        log.warning("alert resolved", extra={"alert": key, "detail": detail})
        self._queue(_RESOLVED, f"• {key}" + (f": {detail}" if detail else ""))

    def report(self, check: str, violations: int, samples: Sequence[str] = ()) -> None:
        """What one run of the reconciler's ``check`` found: ``violations`` > 0 fires
        ``reconciler:<check>`` (with up to five samples); a later run finding none
        resolves it."""
        key = f"reconciler:{_line(check, MAX_KEY - 11)}"
        if violations > 0:
            shown = ", ".join(_line(s, 80) for s in samples[:_SAMPLE])
            self._reported.add(key)
            self.fire(key, f"{violations} found" + (f" ({shown})" if shown else ""))
        elif key in self._reported:
            self._reported.discard(key)
            self.resolve(key, "none found")

    def unaccounted(self, counts: dict[str, int], mended: int) -> None:
        """A reconciler run's counts by kind (missing_entry, terminal_entry, stale_lease)
        and how many it mended: each kind is a ``report`` of its own, so a later run
        finding none of a kind says "resolved" for it."""
        for kind, count in counts.items():
            self.report(kind, count, [f"mended {mended}"] if count else ())

    def _queue(self, headline: str, line: str, *, email: bool = True) -> None:
        if self._webhook_url is None and self._email is None:
            return
        self._pending.append((headline, line, email))
        if self._timer is None or self._timer.done():
            self._timer = asyncio.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(self._batch_seconds)
        await self.flush()

    async def flush(self) -> None:
        """Send what is pending as one webhook message and one email."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        if self._webhook_url is not None:
            await self._post([(headline, line) for headline, line, _ in batch])
        emailed = [(headline, line) for headline, line, email in batch if email]
        if self._email is not None and emailed:
            text = _text(emailed)
            try:
                await self._email(_subject(text), text)
            except Exception:  # an alert email failing must not stop the alerts
                log.exception("alert email failed")

    async def _post(self, batch: list[tuple[str, str]]) -> None:
        assert self._webhook_url is not None
        try:
            response = await self._http.post(self._webhook_url, json={"text": _text(batch)})
            response.raise_for_status()
        except httpx.HTTPError as exc:
            log.error(
                "slack alert failed", extra={"error": type(exc).__name__, "count": len(batch)}
            )

    async def aclose(self) -> None:
        """Send what is pending now rather than at the end of its window."""
        if self._timer is not None and not self._timer.done():
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
        await self.flush()


def _subject(text: str) -> str:
    """The email subject of a batch: its first headline without the emoji shortcode."""
    first = text.split("\n", 1)[0]
    if first.startswith(":") and ": " in first:
        first = first.split(": ", 1)[1]
    return first[:150]


def _text(batch: list[tuple[str, str]]) -> str:
    """Per kind, in the order first seen: a counted headline and up to ``_SAMPLE`` lines."""
    kinds: dict[str, list[str]] = {}
    for headline, line in batch:
        kinds.setdefault(headline, []).append(line)
    lines: list[str] = []
    for headline, samples in kinds.items():
        count = len(samples)
        noun = _NOUNS[headline] + ("" if count == 1 else "s")
        lines.append(headline.format(count=count, noun=noun))
        lines += samples[:_SAMPLE]
        if count > _SAMPLE:
            lines.append(f"… and {count - _SAMPLE} more")
    return "\n".join(lines)
