"""Reading PostgreSQL's ``EXPLAIN (ANALYZE, FORMAT JSON)`` in the plan tests: every node of
a plan, and how many rows its scans of one table read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def plan_nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The node and every node under it."""
    yield plan
    for child in plan.get("Plans", []):
        yield from plan_nodes(child)


def rows_read(nodes: list[dict[str, Any]], table: str) -> int:
    """Rows produced or filtered away by every scan of ``table``, over all its loops."""
    return sum(
        (n.get("Actual Rows", 0) + n.get("Rows Removed by Filter", 0)) * n.get("Actual Loops", 1)
        for n in nodes
        if n.get("Relation Name") == table
    )
