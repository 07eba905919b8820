"""How the dispatcher treats webhook jobs: one direct target, the status table, and
a worker that serves email and webhooks without starving either."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from homing.channels import Channel
from homing.dispatch.passes import DIRECT_TARGET_ID, candidates
from homing.dispatch.worker import claim_order, queues_for
from homing.models import FailureClass, Job, Queue
from homing.providers.webhook.sender import classify_status
from tests.job_values import a_job

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _job(channel: Channel, skipped: tuple[str, ...] = ()) -> Job:
    return a_job(
        id="job-1",
        tenant_id="t-1",
        channel=channel,
        queue=Queue.WEBHOOK,
        payload={"url": "https://hooks.example.com/"},
        passes_made=0,
        skipped_providers=skipped,
        created_at=NOW,
        updated_at=NOW,
    )


def test_a_webhook_job_has_one_direct_target_and_no_provider_account() -> None:
    [target] = candidates(_job(Channel.WEBHOOK), [])
    assert target.id == DIRECT_TARGET_ID
    assert target.vendor == "webhook"
    assert target.tenant_id == "t-1"
    assert candidates(_job(Channel.WEBHOOK, skipped=(DIRECT_TARGET_ID,)), []) == []


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (200, None),
        (201, None),
        (204, None),
        (299, None),
        (301, FailureClass.MESSAGE_PERMANENT),
        (302, FailureClass.MESSAGE_PERMANENT),
        (307, FailureClass.MESSAGE_PERMANENT),
        (400, FailureClass.MESSAGE_PERMANENT),
        (404, FailureClass.MESSAGE_PERMANENT),
        (408, FailureClass.TRANSIENT),
        (410, FailureClass.MESSAGE_PERMANENT),
        (429, FailureClass.THROTTLED),
        (500, FailureClass.TRANSIENT),
        (503, FailureClass.TRANSIENT),
        (599, FailureClass.TRANSIENT),
    ],
)
def test_only_2xx_is_success(status: int, expected: FailureClass | None) -> None:
    assert classify_status(status) is expected


def test_the_default_worker_serves_email_and_webhooks() -> None:
    queues = queues_for([Channel.EMAIL, Channel.WEBHOOK])
    assert queues == [Queue.PLATFORM_EMAIL, Queue.EMAIL, Queue.WEBHOOK]


def test_channels_take_turns_going_first_and_platform_email_always_leads() -> None:
    queues = queues_for([Channel.EMAIL, Channel.WEBHOOK])
    orders = [claim_order(queues, turn) for turn in range(4)]
    assert all(order[0] is Queue.PLATFORM_EMAIL for order in orders)
    assert [order[1] for order in orders] == [
        Queue.EMAIL,
        Queue.WEBHOOK,
        Queue.EMAIL,
        Queue.WEBHOOK,
    ]
    assert claim_order([Queue.WEBHOOK], 7) == [Queue.WEBHOOK]
