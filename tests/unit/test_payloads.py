"""Each channel's job payload, as its writer makes it, has the keys its type in
``homing.models`` names: every required key, and none the type does not know (mypy
checks the keys a writer or a sender spells; this checks what a writer really stores)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from homing.api.routes.email import email_job
from homing.api.routes.sms import sms_job
from homing.api.schemas.email import EmailCreate
from homing.api.schemas.sms import SmsCreate
from homing.channels import Channel
from homing.crypto import MasterKey, Sealer, generate_master_key
from homing.models import EmailPayload, Job, SmsPayload, WebhookPayload, email_payload, sms_payload
from homing.webhooks.message import write_message
from tests.job_values import a_job


def _sealer() -> Sealer:
    return Sealer(MasterKey.from_b64(generate_master_key()))


def _fits(payload: Mapping[str, Any], kind: Any) -> None:
    assert kind.__required_keys__ <= set(payload), kind.__name__
    assert set(payload) <= kind.__required_keys__ | kind.__optional_keys__, kind.__name__


def test_an_email_payload_has_the_keys_of_its_type() -> None:
    body = EmailCreate.model_validate(
        {"to": "ada@example.com", "from": "news@acme.test", "subject": "Hi", "text": "Hello"}
    )
    _fits(email_job(_sealer(), "t1", body, None).payload, EmailPayload)


def test_an_sms_payload_has_the_keys_of_its_type() -> None:
    body = SmsCreate.model_validate({"to": "+14155552671", "body": "Hello"})
    _fits(sms_job(_sealer(), "t1", body, None).payload, SmsPayload)


def test_a_webhook_payload_has_the_keys_of_its_type() -> None:
    payload = write_message(
        _sealer(), "t1", "https://hooks.acme.test/in", b"{}", {"x-acme": "1"}, "order.paid"
    )
    _fits(payload, WebhookPayload)


def test_a_payload_is_read_only_as_its_own_channel() -> None:
    email = _job(Channel.EMAIL, {"to": "a@b.test", "from": "c@d.test", "subject": "s"})
    assert email_payload(email)["subject"] == "s"
    with pytest.raises(ValueError, match="email job has no sms payload"):
        sms_payload(email)


def _job(channel: Channel, payload: dict[str, Any]) -> Job:
    return a_job(channel=channel, payload=payload)
