"""Batch sends through vendors that answer one status for a whole request.

Some vendors take many messages in one request (several recipients of one send, each
with its own variables) but answer it once: one status and one message id, shared by
every message in it; or one refusal for all of them. What is the same for all of them
is here:

- ``plan`` cuts a batch into requests: the messages one request can express together
  (the vendor's ``key``: the same sender, and whatever content the request must share),
  each recipient address at most once per request (a vendor may refuse a repeated
  address, or key its recipient variables by address), at most ``limit`` per request.
  It is linear in the number of messages.
- ``settle`` sends the requests, a few at once, and gives each message its outcome:
  the request's id on acceptance; the request's failure when it is refused for a reason
  that is not the messages' (a bad key, throttling, an outage). A refusal of a request
  of several messages as ``message_permanent`` (a 400 or 413) names no message, and
  nothing of it was sent, so each of its messages is then sent alone, as a single send
  classifies it: one bad address fails alone, the others are delivered.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Final

from homing.models import FailureClass
from homing.providers.base import OutgoingEmail, ProviderFailure, SendResult
from homing.providers.http_adapter import BatchOutcome

# How many requests of one batch run at once, and how many single sends when a
# refused request is sent item by item (so at most their product in flight).
REQUEST_CONCURRENCY: Final = 4
ALONE_CONCURRENCY: Final = 8

Key = Callable[[OutgoingEmail], Hashable]
Request = list[int]


def plan(
    emails: Sequence[OutgoingEmail],
    key: Key,
    address: Callable[[OutgoingEmail], str],
    limit: int,
) -> list[Request]:
    """The requests (lists of indexes into ``emails``) a batch leaves in: by ``key``,
    an address once per request, at most ``limit`` per request, in the order given."""
    # The n-th message to one address (within one key) goes to the n-th request of
    # that key, so a repeated address never meets itself and the walk stays linear.
    rounds: dict[Hashable, list[Request]] = defaultdict(list)
    seen: dict[tuple[Hashable, str], int] = defaultdict(int)
    for index, email in enumerate(emails):
        group = key(email)
        place = (group, address(email).lower())
        turn = seen[place]
        seen[place] = turn + 1
        requests = rounds[group]
        while len(requests) <= turn:
            requests.append([])
        requests[turn].append(index)
    return [
        request[start : start + limit]
        for requests in rounds.values()
        for request in requests
        for start in range(0, len(request), limit)
    ]


async def settle(
    emails: Sequence[OutgoingEmail],
    requests: list[Request],
    call: Callable[[list[OutgoingEmail]], Awaitable[SendResult]],
    alone: Callable[[OutgoingEmail], Awaitable[SendResult]],
) -> list[BatchOutcome]:
    """One outcome per email: each request sent by ``call`` (a single-message request
    by ``alone``, the vendor's single send), a wholly refused one item by item.

    Requests go ``REQUEST_CONCURRENCY`` at a time, so a batch that splits into many
    (messages with bodies of their own) still fits the call's deadline."""
    outcomes: list[BatchOutcome | None] = [None] * len(emails)
    gate = asyncio.Semaphore(REQUEST_CONCURRENCY)

    async def one(request: Request) -> None:
        members = [emails[index] for index in request]
        async with gate:
            answers = await _answers(members, call, alone)
        for index, outcome in zip(request, answers, strict=True):
            outcomes[index] = outcome

    await asyncio.gather(*(one(request) for request in requests))
    missing = [i for i, outcome in enumerate(outcomes) if outcome is None]
    if missing:  # plan covers every index; a gap is a bug, never a silent success
        raise AssertionError(f"no request carried items {missing[:5]}")
    return [outcome for outcome in outcomes if outcome is not None]


async def _answers(
    members: list[OutgoingEmail],
    call: Callable[[list[OutgoingEmail]], Awaitable[SendResult]],
    alone: Callable[[OutgoingEmail], Awaitable[SendResult]],
) -> list[BatchOutcome]:
    if len(members) == 1:
        return [await _outcome(alone(members[0]))]
    answer = await _outcome(call(members))
    if _refused_as_message(answer):
        return await _each_alone(members, alone)
    return [answer] * len(members)


def _refused_as_message(answer: BatchOutcome) -> bool:
    return (
        isinstance(answer, ProviderFailure)
        and answer.failure_class is FailureClass.MESSAGE_PERMANENT
    )


async def _outcome(call: Awaitable[SendResult]) -> BatchOutcome:
    try:
        return await call
    except ProviderFailure as failure:
        return failure


async def _each_alone(
    members: list[OutgoingEmail], alone: Callable[[OutgoingEmail], Awaitable[SendResult]]
) -> list[BatchOutcome]:
    gate = asyncio.Semaphore(ALONE_CONCURRENCY)

    async def one(email: OutgoingEmail) -> BatchOutcome:
        async with gate:
            return await _outcome(alone(email))

    return list(await asyncio.gather(*(one(email) for email in members)))
