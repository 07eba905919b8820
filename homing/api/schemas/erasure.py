"""Bodies of erasure (``POST /v1/erasure``, ``DELETE /v1/recipients/{external_id}``):
docs/recipients.md, "Erasure"."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, Field, StringConstraints

from homing.api.schemas.shared import Strict
from homing.managers.erasure import ErasureReport
from homing.vendors import VENDORS

# An email address is at most 320 characters, a phone number or chat id far fewer.
ErasedAddress = Annotated[str, StringConstraints(min_length=1, max_length=320)]
# The chat address of the example: the first chat vendor's.
_CHAT_VENDOR: Final = next(name for name, v in VENDORS.items() if v.chat is not None)


class ErasureCreate(Strict):
    __doc__ = f"""``POST /v1/erasure``: one address on one channel (a chat's as
    ``<vendor>:<chat id>``, e.g. ``{_CHAT_VENDOR}:4242``)."""

    address: ErasedAddress
    channel: Literal["email", "sms", "chat"]


class ErasurePublic(BaseModel):
    """What one erasure call did: rows erased per kind, rows kept as keyed hashes per
    kind, jobs still queued (erased by a later call once they end), and whether the
    erasure is complete (false: call again to finish it)."""

    erased: dict[str, int] = Field(description="rows erased, per kind")
    kept_as_hash: dict[str, int] = Field(
        description="suppressions and opt-outs now kept only as keyed hashes"
    )
    waiting_jobs: int = Field(description="jobs to the address still queued or in flight")
    complete: bool

    @classmethod
    def of(cls, report: ErasureReport) -> ErasurePublic:
        return cls(
            erased=report.erased_counts(),
            kept_as_hash=dict(sorted(report.hashed.items())),
            waiting_jobs=report.waiting_jobs,
            complete=report.complete,
        )
