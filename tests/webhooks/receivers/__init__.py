"""Real receivers that verify Homing's webhooks as tenants' customers would: Node.js
ones written to the design's rule and to NotifyKit's SDK, and the ``standardwebhooks``
Python library. Each answers 204 (accepted), 401 (refused) or 409 (replayed)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """One request a receiver got, and how it answered."""

    receiver: str
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def accepted(self) -> bool:
        return self.status == 204
