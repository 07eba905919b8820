"""Dead-letter alerts: a log line for each, and batched Slack messages.

A spike of failures gives one Slack message with a count, not one per job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass

import httpx

log = logging.getLogger("homing.alerts")

_SAMPLE = 5


@dataclass(frozen=True, slots=True)
class DeadLetterAlert:
    """One dead-lettered job as the operator's alert reports it."""

    job_id: str
    error_class: str
    error: str


class Alerter:
    """Batches dead-letter alerts to the operator's Slack webhook (or the log), so a
    spike gives one message with a count."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        slack_webhook_url: str | None,
        batch_seconds: float,
    ) -> None:
        self._http = http
        self._slack_url = slack_webhook_url
        self._batch_seconds = batch_seconds
        self._pending: list[DeadLetterAlert] = []
        self._timer: asyncio.Task[None] | None = None

    def dead_letter(self, alert: DeadLetterAlert) -> None:
        """Record a dead-lettered job: logged now, sent to Slack with its batch."""
        log.warning(
            "job dead-lettered",
            extra={"job_id": alert.job_id, "error_class": alert.error_class, "error": alert.error},
        )
        if self._slack_url is None:
            return
        self._pending.append(alert)
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
        if self._timer is not None and not self._timer.done():
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
        await self.flush()


def _text(batch: list[DeadLetterAlert]) -> str:
    noun = "job" if len(batch) == 1 else "jobs"
    lines = [f":rotating_light: Homing dead-lettered {len(batch)} {noun}."]
    lines += [f"• {a.job_id} ({a.error_class}): {a.error[:200]}" for a in batch[:_SAMPLE]]
    if len(batch) > _SAMPLE:
        lines.append(f"… and {len(batch) - _SAMPLE} more")
    return "\n".join(lines)
