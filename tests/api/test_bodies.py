"""The one body cap (homing.api.middleware.body_limit): refused by Content-Length before a byte is
read, else as soon as the bytes that arrive pass the cap."""

from __future__ import annotations

import pytest
from starlette.requests import ClientDisconnect
from starlette.types import Message

from homing.api.middleware.body_limit import declared_length, read_body
from homing.errors import PayloadTooLarge


class Stream:
    """An ASGI ``receive`` over messages, counting those taken."""

    def __init__(self, *messages: Message) -> None:
        self.messages = list(messages)
        self.taken = 0

    async def __call__(self) -> Message:
        self.taken += 1
        return self.messages.pop(0)


def _chunk(body: bytes, more: bool = True) -> Message:
    return {"type": "http.request", "body": body, "more_body": more}


async def test_a_body_within_the_cap_is_read_whole() -> None:
    stream = Stream(_chunk(b"ab"), _chunk(b"cd", more=False))
    assert await read_body([(b"content-length", b"4")], stream, 4) == b"abcd"


async def test_a_declared_length_over_the_cap_is_refused_before_anything_is_read() -> None:
    stream = Stream(_chunk(b"x", more=False))
    with pytest.raises(PayloadTooLarge) as refused:
        await read_body([(b"content-length", b"5")], stream, 4)
    assert refused.value.details == {"limit": 4}
    assert stream.taken == 0


async def test_a_body_without_a_length_is_not_read_past_the_cap() -> None:
    stream = Stream(*(_chunk(b"xx") for _ in range(100)))
    with pytest.raises(PayloadTooLarge):
        await read_body([], stream, 5)
    assert stream.taken == 3


async def test_a_client_that_goes_away_is_a_disconnect() -> None:
    stream = Stream(_chunk(b"x"), {"type": "http.disconnect"})
    with pytest.raises(ClientDisconnect):
        await read_body([], stream, 10)


def test_only_one_all_digit_content_length_is_a_declared_length() -> None:
    assert declared_length([(b"content-length", b"12")]) == 12
    assert declared_length([(b"content-length", b"1"), (b"content-length", b"1")]) is None
    assert declared_length([(b"content-length", b"-1")]) is None
    assert declared_length([]) is None
