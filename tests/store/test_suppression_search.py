"""Searching suppressions by the start of an address (the console's search), on SQLite
and PostgreSQL: LIKE's wildcards in what was typed match only themselves, the channel
and the cursor still apply, and another tenant's entries never match."""

from __future__ import annotations

from homing.channels import Channel
from homing.services import Services
from tests.conftest import stored_tenant


async def test_a_prefix_matches_the_start_of_an_address_and_wildcards_are_plain(
    services: Services,
) -> None:
    store = services.suppressions
    mine, theirs = await stored_tenant(services, "mine"), await stored_tenant(services, "theirs")
    for address in ("ada@example.com", "adam@example.com", "a_b@example.com", "a%c@example.com"):
        await store.add(mine, Channel.EMAIL, address, "manual", "api")
    await store.add(mine, Channel.SMS, "+14155552671", "opted_out", "twilio")
    await store.add(theirs, Channel.EMAIL, "ada@example.org", "manual", "api")

    async def found(
        prefix: str, channel: Channel | None = None, cursor: str | None = None
    ) -> list[str]:
        page = await store.page(mine, channel, limit=10, cursor=cursor, prefix=prefix)
        return [e.address for e in page.entries]

    assert await found("ada") == ["ada@example.com", "adam@example.com"]
    assert await found("a_") == ["a_b@example.com"]
    assert await found("a%") == ["a%c@example.com"]
    assert await found("+1415") == ["+14155552671"]
    assert await found("+1415", Channel.EMAIL) == []
    assert await found("ada", cursor="ada@example.com") == ["adam@example.com"]
    assert await found("zzz") == []
    first = await store.page(mine, limit=1, prefix="ada")
    assert [e.address for e in first.entries] == ["ada@example.com"]
    assert first.next_cursor == "ada@example.com"
