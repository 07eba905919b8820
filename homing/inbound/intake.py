"""Where provider events come in: a request's verification, the receiver that applies
its events, the journal that keeps them, and the reports read from it
(docs/inbound.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from homing.clock import Clock, as_datetime
from homing.domain.inbound import Entry
from homing.inbound.receiver import Receiver
from homing.inbound.report import ReportRow, summarize
from homing.inbound.secrets import InboundSecrets, InboundTarget
from homing.inbound.verification import Nonce
from homing.store.inbound import InboundStore


@dataclass
class Intake:
    """The inbound parts the routes and the worker share."""

    journal: InboundStore
    receiver: Receiver
    secrets: InboundSecrets
    clock: Clock

    def verify(
        self, target: InboundTarget, body: bytes, headers: Mapping[str, str], url: str = ""
    ) -> Nonce | None:
        """Raise VerificationFailed unless the request is the account's provider's; the
        signature's one-time value (a token the signature covers), which
        ``receiver.receive`` claims with the body's journal. ``url``: the public URL the
        request was posted to (for the schemes that sign it)."""
        return target.verify(body, headers, self.clock.now(), url)

    async def history(self, tenant_id: str, job_id: str) -> list[Entry]:
        """The provider events applied to one of the tenant's jobs, oldest first."""
        return await self.journal.for_job(tenant_id, job_id)

    async def report(self, hours: int, tenant_id: str | None = None) -> list[ReportRow]:
        """Per hour and type over the last ``hours`` hours (the current one included)."""
        now = as_datetime(self.clock.now())
        since = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours - 1)
        return await summarize(self.journal.window(since, tenant_id))
