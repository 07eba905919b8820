"""Reading a Prometheus scrape in tests: the value of one sample, the series of ours."""

from __future__ import annotations

from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape by (name, labels)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(text: str, name: str, **labels: str) -> float:
    """The sample ``name`` with exactly ``labels`` in a scrape; 0 when it is absent."""
    return samples(text).get((name, frozenset(labels.items())), 0.0)


def homing_series(text: str) -> set[tuple[str, frozenset[tuple[str, str]]]]:
    """The series of Homing's own metrics (``homing_*``) in a scrape."""
    return {key for key in samples(text) if key[0].startswith("homing_")}


async def scrape(client: httpx.AsyncClient, **kw: Any) -> str:
    """``GET /metrics`` through ``client``, asserted 200."""
    response = await client.get("/metrics", **kw)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


class Moves:
    """The change of samples between two scrapes: ``moved(name, **labels)``."""

    def __init__(self, before: str, after: str) -> None:
        self._before = samples(before)
        self._after = samples(after)

    def moved(self, name: str, **labels: str) -> float:
        key = (name, frozenset(labels.items()))
        return self._after.get(key, 0.0) - self._before.get(key, 0.0)
