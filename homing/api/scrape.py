"""One Prometheus scrape: the registry of this process, or of every process of one
``homing run``, with the queue's depth sampled from the database first.

``homing run`` and ``homing api`` give their children one private directory in
``PROMETHEUS_MULTIPROC_DIR`` (``homing.__main__``); with it set, every process writes
its samples there and a scrape of any API process reads them all (the library's
multiprocess mode). Without it (a single ``homing api`` or ``homing worker`` started
otherwise, the tests) the process's own registry is the scrape.

The queue's depth and the age of its oldest claimable entry are sampled at scrape time,
not by a loop: one grouped read of the due range of ``queue_entries``, only when
someone looks, at most once per ``SAMPLE_SECONDS`` per process however many scrapers
and probes ask, and bounded in time so a slow database never holds a scrape. Every
queue and priority is set, to 0 when it has nothing claimable, so a drained queue
reads 0 rather than its last value.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Callable

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from homing.crypto import constant_time_equals
from homing.errors import StoreError, Unauthenticated
from homing.metrics import QUEUE_DEPTH, QUEUE_OLDEST_SECONDS
from homing.models import Priority, Queue
from homing.store.jobs import JobStore

__all__ = ["MULTIPROC_ENV", "Scrape", "check_token", "registry"]

log = logging.getLogger("homing.metrics")

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
SAMPLE_SECONDS = 5.0
SAMPLE_TIMEOUT_SECONDS = 2.0
# Authorization headers longer than this are refused without a comparison.
MAX_AUTHORIZATION = 512


def registry() -> CollectorRegistry:
    """What a scrape reads: every process's samples in multiprocess mode, else this
    process's own registry."""
    directory = os.environ.get(MULTIPROC_ENV)
    if not directory:
        return REGISTRY
    shared = CollectorRegistry()
    MultiProcessCollector(shared, path=directory)  # type: ignore[no-untyped-call]
    return shared


def check_token(expected: str | None, authorization: str | None) -> None:
    """Unauthenticated unless ``authorization`` is ``Bearer <expected>``; with no token
    configured, every scrape is let in. The comparison is constant-time over SHA-256
    digests, so neither the token nor its length leaks through timing."""
    if expected is None:
        return
    scheme, _, given = (authorization or "")[:MAX_AUTHORIZATION].partition(" ")
    if scheme.lower() != "bearer" or not constant_time_equals(
        hashlib.sha256(given.strip().encode()).digest(),
        hashlib.sha256(expected.encode()).digest(),
    ):
        raise Unauthenticated("send HOMING_METRICS_TOKEN as 'Authorization: Bearer …'")


class Scrape:
    """Answers scrapes for one process: samples the queue (cached), then renders."""

    def __init__(self, jobs: JobStore, now: Callable[[], float] = time.monotonic) -> None:
        self._jobs = jobs
        self._now = now
        self._sampled: float | None = None

    async def text(self) -> bytes:
        """The exposition text of one scrape."""
        await self.sample()
        return generate_latest(registry())

    async def sample(self) -> None:
        """Set the queue gauges from the database, unless sampled in the last
        ``SAMPLE_SECONDS``; a database that fails or is slow leaves them as they were."""
        now = self._now()
        if self._sampled is not None and now - self._sampled < SAMPLE_SECONDS:
            return
        self._sampled = now
        try:
            async with asyncio.timeout(SAMPLE_TIMEOUT_SECONDS):
                rows = await self._jobs.claimable()
        except (StoreError, TimeoutError) as exc:
            log.warning("queue depth not sampled", extra={"error": type(exc).__name__})
            return
        found = {(row.queue, row.priority): row for row in rows}
        for queue in Queue:
            for priority in Priority:
                row = found.get((queue.value, priority.value))
                labels = (queue.value, priority.name.lower())
                QUEUE_DEPTH.labels(*labels).set(row.count if row else 0)
                QUEUE_OLDEST_SECONDS.labels(*labels).set(row.oldest_age_seconds if row else 0)
