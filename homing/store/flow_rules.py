"""The rules of a multi-channel notification's steps (docs/notifications.md), as pure
functions of what the database holds: what one step's job and its signals mean for
the step, and what a notification's steps mean for it. No SQL here; the store applies
what they decide, each change conditional on the status it was decided from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "FAILURE_SIGNALS",
    "OUTCOMES",
    "STRATEGIES",
    "SUCCESS_SIGNALS",
    "Verdict",
    "decide",
    "overall",
]

STRATEGIES = ("all", "first", "escalate")

# A step's statuses: the two it waits in, and its one outcome.
PENDING = "pending"  # not made yet (a later step of first or escalate)
QUEUED = "queued"  # its job is made; its outcome is not known yet
ACCEPTED = "accepted"  # a provider accepted its job (all, first)
SUCCEEDED = "succeeded"  # a success signal arrived in time (escalate)
FAILED = "failed"  # its job failed, or a provider reported a failure
SKIPPED = "skipped"  # the recipient cannot be reached there, or does not want it
ESCALATED = "escalated"  # no success signal in time: the next step was made
UNCONFIRMED = "unconfirmed"  # the last step of escalate, sent, no signal in time
NOT_NEEDED = "not_needed"  # an earlier step succeeded
OUTCOMES = (ACCEPTED, SUCCEEDED, FAILED, SKIPPED, ESCALATED, UNCONFIRMED, NOT_NEEDED)
SUCCESSES = frozenset({ACCEPTED, SUCCEEDED})

# What a provider event or a feed mark says of a sent step.
SUCCESS_SIGNALS = ("delivered", "opened", "clicked", "seen", "read")
FAILURE_SIGNALS = ("bounced", "failed")

# A notification's statuses.
RUNNING = "running"

_TERMINAL_FAILURES = {"FAILED", "CANCELLED"}


@dataclass(frozen=True, slots=True)
class Verdict:
    """A step's outcome and why (an error class, a signal, ``no_signal``…)."""

    outcome: str
    reason: str


def decide(
    strategy: str,
    channel: str,
    job_status: str | None,
    error_class: str | None,
    signal: str | None,
    due: bool,
    last: bool,
) -> Verdict | None:
    """The outcome of a queued step, or None while it waits. ``signal``: the first
    success or failure its job was reported with; ``due``: an escalating step's window
    has ended; ``last``: no step follows it."""
    if job_status is None:  # its job is gone (retention): nothing more will be known
        return Verdict(FAILED, "job_gone")
    if job_status == "SUPPRESSED":
        return Verdict(SKIPPED, error_class or "suppressed")
    if job_status in _TERMINAL_FAILURES:
        return Verdict(FAILED, error_class or job_status.lower())
    if signal in FAILURE_SIGNALS:
        return Verdict(FAILED, signal)
    if strategy != "escalate":
        return Verdict(ACCEPTED, "accepted") if job_status == "COMPLETED" else None
    if signal in SUCCESS_SIGNALS:
        return Verdict(SUCCEEDED, signal)
    if job_status == "COMPLETED" and channel == "chat":
        # Telegram and Slack report nothing after they accept: acceptance is the signal.
        return Verdict(SUCCEEDED, "accepted")
    if due:
        return Verdict(UNCONFIRMED if last else ESCALATED, "no_signal")
    return None


def overall(strategy: str, statuses: Sequence[str]) -> str | None:
    """The notification's status once its steps say so (None: still running); for
    first and escalate, a failed or escalated step with a pending one after it means
    "make the next" (the caller's), not an ending."""
    if any(s in SUCCESSES for s in statuses):
        if strategy == "all" and any(s in (PENDING, QUEUED) for s in statuses):
            return None
        return SUCCEEDED
    if any(s in (PENDING, QUEUED) for s in statuses):
        return None
    return UNCONFIRMED if UNCONFIRMED in statuses else FAILED
