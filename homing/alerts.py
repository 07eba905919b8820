"""Operator alerts: a log line for each, and batched Slack messages with counts.

One alerter for every alert Homing raises: a dead-lettered job (the worker), an inbound
event that came again with a different body, and a message a provider accepted and then
dropped (the inbound receiver), and jobs the reconciler found outside the ledger
invariant (``homing.managers.reconciler``). Each is logged at once (no secret, no body); with
HOMING_ALERT_SLACK_WEBHOOK_URL set, the alerts of one HOMING_ALERT_BATCH_SECONDS window
go out as one Slack message that counts them by kind, so a spike of failures is one
message, not one per job, and a slow Slack never delays the worker or a provider's
request. The Slack URL is the operator's, not a provider endpoint: its client is the
unguarded one ``homing.services`` builds for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Final

import httpx

__all__ = ["Alerter", "DeadLetterAlert"]

log = logging.getLogger("homing.alerts")
inbound_log = logging.getLogger("homing.inbound")

_SAMPLE: Final = 5
# Headline of each kind of alert in a Slack message, by count.
_DEAD_LETTER: Final = ":rotating_light: Homing dead-lettered {count} {noun}."
_CONFLICT: Final = (
    ":warning: Homing received {count} inbound {noun} again with a different body; "
    "kept and not applied."
)
_DROPPED: Final = ":warning: Providers report {count} accepted {noun} not sent."
_UNACCOUNTED: Final = (
    ":rotating_light: Homing's reconciler found jobs outside the ledger invariant "
    "in {count} {noun}."
)
_NOUNS: Final = {
    _DEAD_LETTER: "job",
    _CONFLICT: "event",
    _DROPPED: "message",
    _UNACCOUNTED: "run",
}


@dataclass(frozen=True, slots=True)
class DeadLetterAlert:
    """A job that failed for good: its id, failure class and (safe) error detail."""

    job_id: str
    error_class: str
    error: str


class Alerter:
    """Logs each alert and sends each batch of them to Slack as one counted message."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        slack_webhook_url: str | None,
        batch_seconds: float,
    ) -> None:
        self._http = http
        self._slack_url = slack_webhook_url
        self._batch_seconds = batch_seconds
        self._pending: list[tuple[str, str]] = []  # (headline, sample line)
        self._timer: asyncio.Task[None] | None = None

    def dead_letter(self, alert: DeadLetterAlert) -> None:
        """Record a dead-lettered job: logged now, sent to Slack with its batch."""
        log.warning(
            "job dead-lettered",
            extra={"job_id": alert.job_id, "error_class": alert.error_class, "error": alert.error},
        )
        self._queue(_DEAD_LETTER, f"• {alert.job_id} ({alert.error_class}): {alert.error[:200]}")

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

    def unaccounted(self, counts: dict[str, int], mended: int) -> None:
        """A reconciler run found jobs outside the ledger invariant (counts by kind:
        missing_entry, terminal_entry, stale_lease) and mended ``mended`` of them. The
        reconciler logs the counts itself; this sends them to Slack with the batch."""
        found = ", ".join(f"{kind} {count}" for kind, count in counts.items())
        self._queue(_UNACCOUNTED, f"• {found}; mended {mended}")

    def _queue(self, headline: str, line: str) -> None:
        if self._slack_url is None:
            return
        self._pending.append((headline, line))
        if self._timer is None or self._timer.done():
            self._timer = asyncio.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(self._batch_seconds)
        await self.flush()

    async def flush(self) -> None:
        """Send what is pending as one Slack message."""
        batch, self._pending = self._pending, []
        if not batch or self._slack_url is None:
            return
        try:
            response = await self._http.post(self._slack_url, json={"text": _text(batch)})
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
