"""The rules of a multi-channel notification's steps (homing.store.flow_rules), as pure
functions: one outcome per step from its job and signals, and the notification's
status from its steps."""

from __future__ import annotations

import pytest

from homing.store.flow_rules import Verdict, decide, overall


def _decide(
    strategy: str,
    job: str | None,
    *,
    channel: str = "sms",
    error_class: str | None = None,
    signal: str | None = None,
    due: bool = False,
    last: bool = False,
) -> Verdict | None:
    return decide(strategy, channel, job, error_class, signal, due, last)


@pytest.mark.parametrize("strategy", ["all", "first", "escalate"])
def test_a_failed_or_suppressed_job_ends_its_step_whatever_the_strategy(strategy: str) -> None:
    failed = _decide(strategy, "FAILED", error_class="message_permanent")
    assert failed == Verdict("failed", "message_permanent")
    assert _decide(strategy, "SUPPRESSED", error_class="preference") == Verdict(
        "skipped", "preference"
    )
    assert _decide(strategy, "CANCELLED") == Verdict("failed", "cancelled")
    assert _decide(strategy, None) == Verdict("failed", "job_gone")
    assert _decide(strategy, "PENDING") is None


def test_all_and_first_end_at_acceptance_escalate_waits_for_a_signal() -> None:
    for strategy in ("all", "first"):
        assert _decide(strategy, "COMPLETED") == Verdict("accepted", "accepted")
        assert _decide(strategy, "PROCESSING") is None
    assert _decide("escalate", "COMPLETED") is None
    assert _decide("escalate", "COMPLETED", signal="delivered") == Verdict("succeeded", "delivered")
    assert _decide("escalate", "COMPLETED", channel="in_app", signal="seen") == Verdict(
        "succeeded", "seen"
    )
    # Chat vendors report nothing after they accept: acceptance is the signal.
    assert _decide("escalate", "COMPLETED", channel="chat") == Verdict("succeeded", "accepted")


def test_escalate_escalates_when_due_or_at_once_on_a_failure_signal() -> None:
    assert _decide("escalate", "COMPLETED", due=True) == Verdict("escalated", "no_signal")
    assert _decide("escalate", "PENDING", due=True) == Verdict("escalated", "no_signal")
    assert _decide("escalate", "COMPLETED", due=True, last=True) == Verdict(
        "unconfirmed", "no_signal"
    )
    assert _decide("escalate", "COMPLETED", signal="bounced") == Verdict("failed", "bounced")
    # A success in time wins over the window ending in the same sweep.
    assert _decide("escalate", "COMPLETED", signal="read", due=True) == Verdict("succeeded", "read")


def test_the_notification_ends_when_its_steps_say_so() -> None:
    assert overall("all", ["accepted", "queued"]) is None
    assert overall("all", ["accepted", "failed", "skipped"]) == "succeeded"
    assert overall("all", ["failed", "skipped"]) == "failed"
    assert overall("first", ["accepted", "pending"]) == "succeeded"
    assert overall("first", ["failed", "pending"]) is None
    assert overall("escalate", ["escalated", "queued"]) is None
    assert overall("escalate", ["escalated", "unconfirmed"]) == "unconfirmed"
    assert overall("escalate", ["escalated", "succeeded"]) == "succeeded"
