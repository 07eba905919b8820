"""Log lines are JSON and never carry a secret."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from homing.logs import configure_logging, redact_text


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    buffer = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    configure_logging("debug", buffer)
    yield buffer
    root.handlers = saved[0]
    root.setLevel(saved[1])


def test_secret_fields_and_secret_looking_values_are_redacted(stream: io.StringIO) -> None:
    logging.getLogger("homing.test").warning(
        "calling provider with Bearer re_abcdefghijk123 and hk_live_key_123456789",
        extra={"api_key": "SG.supersecretvalue", "job_id": "j-1", "nested": {"password": "p"}},
    )
    line = json.loads(stream.getvalue().strip().splitlines()[-1])
    text = json.dumps(line)
    for secret in ("re_abcdefghijk123", "hk_live_key_123456789", "SG.supersecretvalue", '"p"'):
        assert secret not in text
    assert line["job_id"] == "j-1"
    assert line["api_key"] == "[REDACTED]"
    assert line["level"] == "warning"


def test_redact_text_keeps_the_prefix_as_a_hint() -> None:
    assert redact_text("key whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw end") == (
        "key whsec_[REDACTED] end"
    )
