"""Ids are UUIDv7 and strictly increasing within a process."""

from __future__ import annotations

import uuid

from homing.models import new_id


def test_ids_are_version_7_and_strictly_increasing() -> None:
    ids = [new_id() for _ in range(20_000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    parsed = uuid.UUID(ids[0])
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122
