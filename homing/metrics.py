"""Every Prometheus metric Homing exports, defined once, with bounded labels only.

Labels name kinds, never instances: channel, provider *kind* (a vendor's name, not an
account id), outcome class, queue, priority, status, reason. No tenant id, URL,
address or free text is ever a label value; per-tenant figures live in the admin API.

Modules import the metric they move from here, so the full list (and docs/operations.md's table)
has one source. ``homing run`` children share one scrape through the library's
multiprocess mode (see ``homing.api.routes.metrics`` once it exists).
"""

from __future__ import annotations

from collections.abc import Collection

from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics

from homing.errors import (
    Conflict,
    HomingError,
    InvalidRequest,
    QuotaExceeded,
    RateLimited,
    StoreUnavailable,
    TenantSuspended,
    Unauthenticated,
)

__all__ = [
    "ACCEPTED",
    "ALERTS",
    "DEAD_LETTERS",
    "FEED_ITEMS",
    "FEED_STREAMS",
    "FEED_STREAMS_DROPPED",
    "INBOUND_EVENTS",
    "IN_FLIGHT",
    "JOBS_FINISHED",
    "NOTICES",
    "NOTIFICATION_STEPS",
    "PROVIDER_CALLS",
    "PROVIDER_CALL_SECONDS",
    "QUEUE_DEPTH",
    "QUEUE_OLDEST_SECONDS",
    "REFUSED",
    "THROTTLED_DEFERRALS",
    "UNACCOUNTED_JOBS",
    "WEBHOOK_DELIVERIES",
    "bounded",
    "refusal_reason",
]

OTHER = "other"

# A ``…_created`` sample per series doubles a scrape for nothing a dashboard reads, and
# the multiprocess scrape of ``homing run`` has none: one shape of scrape everywhere.
disable_created_metrics()  # type: ignore[no-untyped-call]


def bounded(value: str, allowed: Collection[str]) -> str:
    """``value`` when it is one of ``allowed``, else ``"other"``: whatever a tenant sends,
    a label takes its values from a fixed set, so the number of series stays bounded."""
    return value if value in allowed else OTHER


# The reason label of homing_notifications_refused_total, by the refusal's error class
# (the first that matches); "suppressed" is an accepted job that ends SUPPRESSED.
SUPPRESSED = "suppressed"
_REASONS: tuple[tuple[type[HomingError], str], ...] = (
    (RateLimited, "rate_limited"),
    (QuotaExceeded, "quota"),
    (TenantSuspended, "suspended"),
    (Unauthenticated, "unauthenticated"),
    (Conflict, "conflict"),
    (InvalidRequest, "invalid"),
    (StoreUnavailable, "unavailable"),
)


def refusal_reason(error: HomingError | None) -> str:
    """The reason label of one refusal; None is a request the API's validation refused."""
    if error is None:
        return "invalid"
    return next((reason for kind, reason in _REASONS if isinstance(error, kind)), OTHER)


ACCEPTED = Counter(
    "homing_notifications_accepted_total",
    "Notifications accepted (202) by channel.",
    ["channel"],
)
REFUSED = Counter(
    "homing_notifications_refused_total",
    "Notifications refused at the API by channel and reason (suppressed, quota, "
    "rate_limited, suspended, unauthenticated, conflict, invalid, unavailable, other).",
    ["channel", "reason"],
)
PROVIDER_CALLS = Counter(
    "homing_provider_calls_total",
    "Calls to a provider by channel, provider kind and outcome class.",
    ["channel", "provider", "outcome"],
)
PROVIDER_CALL_SECONDS = Histogram(
    "homing_provider_call_seconds",
    "Duration of one provider call by channel and provider kind.",
    ["channel", "provider"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
JOBS_FINISHED = Counter(
    "homing_jobs_finished_total",
    "Jobs that reached a terminal status, by channel and status.",
    ["channel", "status"],
)
THROTTLED_DEFERRALS = Counter(
    "homing_throttled_deferrals_total",
    "Jobs put back without spending an attempt because a pacing rule or a provider's "
    "429 said wait, by channel.",
    ["channel"],
)
DEAD_LETTERS = Counter(
    "homing_dead_letters_total",
    "Jobs that ended in the dead-letter queue, by queue and error class.",
    ["queue", "error_class"],
)
INBOUND_EVENTS = Counter(
    "homing_inbound_events_total",
    "Provider events received, by provider kind and result (applied, ignored, duplicate, "
    "conflict, quarantined, refused).",
    ["provider", "result"],
)
WEBHOOK_DELIVERIES = Counter(
    "homing_webhook_deliveries_total",
    "Outbound webhook deliveries by outcome class.",
    ["outcome"],
)
IN_FLIGHT = Gauge(
    "homing_jobs_in_flight",
    "Jobs this process is delivering right now.",
    multiprocess_mode="livesum",
)
QUEUE_DEPTH = Gauge(
    "homing_queue_depth",
    "Claimable queue entries by queue and priority, sampled from the database.",
    ["queue", "priority"],
    multiprocess_mode="mostrecent",
)
QUEUE_OLDEST_SECONDS = Gauge(
    "homing_queue_oldest_seconds",
    "Age of the oldest claimable entry by queue and priority, sampled from the database.",
    ["queue", "priority"],
    multiprocess_mode="mostrecent",
)
UNACCOUNTED_JOBS = Gauge(
    "homing_unaccounted_jobs",
    "Jobs the last reconciler pass found outside the ledger invariant (must read 0).",
    multiprocess_mode="mostrecent",
)

# The in-app feed (docs/feed.md).
FEED_ITEMS = Counter(
    "homing_feed_items_total",
    "In-app sends by outcome: stored in the feed, or suppressed by a preference.",
    ["outcome"],
)
FEED_STREAMS = Gauge(
    "homing_feed_streams",
    "Feed streams (Server-Sent Events) open in this process.",
    multiprocess_mode="livesum",
)
FEED_READS = Counter(
    "homing_feed_reads_total",
    "Feed reads for open streams: the process's poll rounds (one for all its streams, "
    "by=poll) and the reads of streams woken by a change (by=stream).",
    ["by"],
)
FEED_STREAMS_DROPPED = Counter(
    "homing_feed_streams_dropped_total",
    "Feed streams closed because their reader fell a whole buffer behind.",
)

# Multi-channel notifications (docs/notifications.md).
NOTIFICATION_STEPS = Counter(
    "homing_notification_steps_total",
    "Steps of multi-channel notifications by channel and outcome (accepted, succeeded, "
    "failed, skipped, escalated, unconfirmed, not_needed).",
    ["channel", "outcome"],
)

# Notices and alerts (docs/operations.md "Notices to tenants and platform email", "Alerts").
NOTICES = Counter(
    "homing_notices_total",
    "Notices to tenants by event type and result (sent, held past the hourly bound, "
    "duplicate: recorded before).",
    ["kind", "result"],
)
ALERTS = Counter(
    "homing_alerts_total",
    "Operator alert conditions by name (the key before its first colon: "
    "queue_not_draining, provider_failing, …) and state (fired, resolved).",
    ["alert", "state"],
)
