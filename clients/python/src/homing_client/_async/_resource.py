"""What every resource of ``AsyncClient`` stands on: the client it calls through, and
the iterator over a listing's cursor pages."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TypeVar

from homing_client._core import Call, Page

if TYPE_CHECKING:
    from homing_client._async.client import AsyncClient

T = TypeVar("T")


# A group of calls (``client.jobs``, ``client.templates``…) on one client. No docstring:
# each resource class would inherit it in ``help()``.
class Resource:
    def __init__(self, client: AsyncClient) -> None:
        self._c = client


async def pages(
    client: AsyncClient,
    path: str,
    model: type[Page[T]],
    limit: int | None,
    filters: dict[str, Any] | None = None,
) -> AsyncIterator[T]:
    """Every item of the listing at ``path``, fetching its cursor pages as it goes."""
    cursor: str | None = None
    while True:
        params = {**(filters or {}), "cursor": cursor, "limit": limit}
        page = await client.request(Call("GET", path, model, params=params))
        for item in page.data:
            yield item
        cursor = page.next_cursor
        if not cursor:
            return
