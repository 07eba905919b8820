"""An integer past 64 bits in a template's data is a 422 naming the field, never a 500:
Python reads any number of digits, and the fingerprint and the stored row (orjson)
take 64 bits. (A webhook's payload keeps any integer: it is stored and sent as written,
tests/webhooks/test_delivery.py.) Found by the long
Schemathesis run on ``POST /v1/notifications`` (docs/reliability.md, "Hostile input")."""

from __future__ import annotations

import pytest

from homing.api.schemas.shared import JSON_INT_MAX, JSON_INT_MIN, fits_64_bits
from tests.conftest import TenantClient

HUGE = 2**64


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/v1/notifications",
            {
                "recipient": "ada",
                "template": "welcome",
                "channels": ["email"],
                "data": {"n": HUGE},
            },
        ),
        (
            "/v1/notifications/email",
            {
                "to": "ada@example.com",
                "from": "a@acme.example",
                "template": "welcome",
                "data": {"deep": [{"n": -HUGE}]},
            },
        ),
    ],
)
async def test_an_integer_past_64_bits_is_a_422_not_a_500(
    tenant: TenantClient, path: str, body: dict[str, object]
) -> None:
    answer = await tenant.post(path, json=body, headers={"Idempotency-Key": "big"})
    assert answer.status_code == 422, answer.text
    assert "64 bits" in answer.text


def test_the_bounds_are_orjsons_and_the_walk_takes_any_depth() -> None:
    assert fits_64_bits({"a": [JSON_INT_MIN, JSON_INT_MAX, 1.5e300]})
    deep: object = HUGE
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ValueError, match="64 bits"):
        fits_64_bits({"x": deep})
