"""Jobs (queued sends) and dead letters (jobs that failed for good)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from homing_client import models
from homing_client._async._resource import Resource, pages
from homing_client._core import Call, drop_none, segment


class Jobs(Resource):
    async def get(self, job_id: str) -> models.JobPublic:
        return await self._c.request(Call("GET", f"/v1/jobs/{segment(job_id)}", models.JobPublic))

    async def page(
        self, *, cursor: str | None = None, limit: int | None = None, **filters: Any
    ) -> models.PageJobSummary:
        """One page of jobs, newest first (``filters``: to, channel, status, since, …)."""
        params = {"cursor": cursor, "limit": limit, **filters}
        return await self._c.request(Call("GET", "/v1/jobs", models.PageJobSummary, params=params))

    async def list(
        self, *, limit: int | None = None, **filters: Any
    ) -> AsyncIterator[models.JobSummary]:
        """Every job matching ``filters``, fetching the cursor pages as it goes."""
        cursor: str | None = None
        while True:
            page = await self.page(cursor=cursor, limit=limit, **filters)
            for item in page.data:
                yield item
            cursor = page.next_cursor
            if not cursor:
                return

    async def retry(self, job_id: str) -> models.Queued:
        path = f"/v1/jobs/{segment(job_id)}/retry"
        return await self._c.request(Call("POST", path, models.Queued))

    async def cancel(self, job_id: str) -> models.JobSummary:
        path = f"/v1/jobs/{segment(job_id)}/cancel"
        return await self._c.request(Call("POST", path, models.JobSummary))

    async def reschedule(self, job_id: str, *, send_at: datetime | str) -> models.JobSummary:
        """Move a scheduled job to ``send_at`` (an aware datetime or ISO 8601 text)."""
        when = send_at.isoformat() if isinstance(send_at, datetime) else send_at
        path = f"/v1/jobs/{segment(job_id)}"
        return await self._c.request(Call("PATCH", path, models.JobSummary, {"send_at": when}))


class DeadLetters(Resource):
    """Jobs that failed for good (docs/reliability.md)."""

    async def page(
        self, *, cursor: str | None = None, limit: int | None = None, **filters: Any
    ) -> models.PageDeadLetterPublic:
        """One page of dead letters (``filters``: queue, error_class, provider, since,
        until, q)."""
        params = {"cursor": cursor, "limit": limit, **filters}
        return await self._c.request(
            Call("GET", "/v1/dead-letters", models.PageDeadLetterPublic, params=params)
        )

    async def list(
        self, *, limit: int | None = None, **filters: Any
    ) -> AsyncIterator[models.DeadLetterPublic]:
        """Every dead letter matching ``filters``, fetching the cursor pages as it goes."""
        async for item in pages(
            self._c, "/v1/dead-letters", models.PageDeadLetterPublic, limit, filters
        ):
            yield item

    async def get(self, dead_letter_id: str) -> models.DeadLetterDetail:
        path = f"/v1/dead-letters/{segment(dead_letter_id)}"
        return await self._c.request(Call("GET", path, models.DeadLetterDetail))

    async def redrive(self, **selection: Any) -> models.Redriven:
        """Queue the chosen dead letters again (``selection``: ids, filter, all;
        ``dry_run=True`` counts them only)."""
        body = drop_none(**selection)
        return await self._c.request(
            Call("POST", "/v1/dead-letters/redrive", models.Redriven, body)
        )

    async def purge(self, **selection: Any) -> models.Purged:
        """Delete the chosen dead letters (``selection`` as ``redrive``)."""
        body = drop_none(**selection)
        return await self._c.request(Call("POST", "/v1/dead-letters/purge", models.Purged, body))
