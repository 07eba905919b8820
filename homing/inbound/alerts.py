"""Alerts about inbound events: a security conflict, a message a provider dropped.

Always a log line (no secret, no body); also a Slack message when
HOMING_ALERT_SLACK_WEBHOOK_URL is set. Slack posts run in the background so a slow
Slack never delays the answer to a provider; ``aclose`` waits for them.
"""

from __future__ import annotations

import asyncio
import logging

import httpx

log = logging.getLogger("homing.inbound")


class InboundAlerts:
    """Tells the operator (Slack or the log) about journal conflicts and provider calls
    that failed while handling inbound events."""

    def __init__(self, http: httpx.AsyncClient, slack_webhook_url: str | None) -> None:
        self._http = http
        self._slack_url = slack_webhook_url
        self._tasks: set[asyncio.Task[None]] = set()

    def conflict(self, source: str, account_id: str, event_id: str) -> None:
        """The same event id arrived with a different body: kept, not applied."""
        log.warning(
            "inbound event conflict: same event id, different body",
            extra={"source": source, "provider_account_id": account_id, "event_id": event_id},
        )
        self._slack(
            f":warning: Homing received {source} event {event_id} again with a different "
            f"body (account {account_id or 'billing'}). It was kept and not applied."
        )

    def provider_failed(self, source: str, job_id: str, vendor_type: str) -> None:
        """A provider accepted a message and then did not send it."""
        log.warning(
            "provider reports a message it accepted was not sent",
            extra={"source": source, "job_id": job_id, "vendor_type": vendor_type},
        )
        self._slack(f":warning: {source} reports job {job_id} was not sent ({vendor_type}).")

    def _slack(self, text: str) -> None:
        if self._slack_url is None:
            return
        task = asyncio.create_task(self._post(self._slack_url, text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, url: str, text: str) -> None:
        try:
            response = await self._http.post(url, json={"text": text})
            response.raise_for_status()
        except httpx.HTTPError as exc:
            log.error("slack alert failed", extra={"error": type(exc).__name__})

    async def aclose(self) -> None:
        """Wait for the Slack posts still in flight."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
