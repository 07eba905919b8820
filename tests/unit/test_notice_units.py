"""The pure parts of notices and alerts: what the worker's outcomes show, the p95, the
thresholds read from the settings, a notice's webhook body."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from homing.dispatch.outcome_watch import findings
from homing.domain.queue import Completed, Failed
from homing.managers.alert_checks import Thresholds, p95
from homing.managers.notices import notice_body
from homing.models import Attempt, AttemptOutcome
from homing.settings import Settings
from homing.store.notices import Notice

AT = datetime(2026, 5, 4, 9, 12, tzinfo=UTC)


def _attempt(
    provider: str, outcome: AttemptOutcome, status: int | None, account: str | None = "pa"
) -> Attempt:
    return Attempt(
        job_id="job",
        tenant_id="tenant",
        number=1,
        provider_account_id=account,
        provider=provider,
        outcome=outcome,
        status_code=status,
        error=None,
        started_at=AT,
        duration_ms=5,
    )


def test_findings_name_refused_credentials_and_gone_urls_only() -> None:
    outcomes = [
        Completed(
            job_id="j1",
            claim_token="t",
            attempts=[
                _attempt("resend", AttemptOutcome.PROVIDER_PERMANENT, 401, "pa_1"),
                _attempt("mailgun", AttemptOutcome.SUCCESS, 200, "pa_2"),
            ],
            provider="mailgun",
            provider_message_id="m1",
            passes_made=1,
        ),
        Failed(
            job_id="j2",
            claim_token="t",
            attempts=[_attempt("webhook", AttemptOutcome.MESSAGE_PERMANENT, 410, None)],
            passes_made=1,
            error="gone",
            error_class="message_permanent",
        ),
        Failed(
            job_id="j3",
            claim_token="t",
            attempts=[_attempt("sendgrid", AttemptOutcome.PROVIDER_PERMANENT, 400, "pa_3")],
            passes_made=1,
            error="x",
            error_class="provider_permanent",
        ),
        Failed(
            job_id="j4",
            claim_token="t",
            attempts=[_attempt("sendgrid", AttemptOutcome.TRANSIENT, 403, "pa_4")],
            passes_made=1,
            error="x",
            error_class="transient",
        ),
    ]
    found = findings(outcomes)
    assert found.rejected_credentials == {("tenant", "pa_1")}
    assert found.gone_endpoints == {("tenant", "job")}
    no_attempts = Completed(
        job_id="j",
        claim_token="t",
        attempts=[],
        provider="p",
        provider_message_id=None,
        passes_made=1,
    )
    assert not findings([no_attempts])


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], 0.0),
        ([3.0], 3.0),
        ([float(i) for i in range(1, 101)], 95.0),
        ([1.0] * 19 + [900.0], 1.0),
    ],
)
def test_p95_is_the_nearest_rank(values: list[float], expected: float) -> None:
    assert p95(values) == expected


def test_thresholds_come_from_the_settings() -> None:
    settings = Settings(_env_file=None, alert_dead_letter_spike=7, alert_window_seconds=60)  # type: ignore[call-arg]
    thresholds = Thresholds.of(settings)
    assert thresholds.dead_letter_spike == 7 and thresholds.window_seconds == 60
    assert thresholds.queue_stuck_seconds == Settings().alerts.queue_stuck_seconds


def test_a_notice_body_is_standard_webhooks_type_timestamp_and_data() -> None:
    notice = Notice(
        id="n1",
        tenant_id="t1",
        kind="quota.warning",
        event_key="webhook:2026-05",
        data={"used": 4},
        held=False,
        created_at=AT,
    )
    assert json.loads(notice_body(notice)) == {
        "type": "quota.warning",
        "timestamp": "2026-05-04T09:12:00Z",
        "data": {"notice_id": "n1", "used": 4},
    }


@pytest.mark.parametrize("value", ["a@b.example, c@d.example", "x" * 401, "no-at"])
def test_the_alert_email_setting_is_one_address(value: str) -> None:
    with pytest.raises(ValueError):
        Settings(_env_file=None, alert_email=value)  # type: ignore[call-arg]
