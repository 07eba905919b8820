"""SMS opt-out and opt-in keywords, as the carriers and vendors honour them.

An inbound SMS whose whole text is STOP or a synonym asks the sender's number to be
suppressed; START, UNSTOP or YES lifts it (docs/architecture.md, "Suppression"). Only a
short text can be a keyword, so reading one is bounded whatever the message's length.
"""

from __future__ import annotations

from typing import Final

from homing.channels import Channel
from homing.inbound.events import DeliveryEvent, EventType

OPT_OUT: Final = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"})
OPT_IN: Final = frozenset({"START", "UNSTOP", "YES"})
_MAX_KEYWORD: Final = 20


def inbound_sms(body: object, sender: str | None) -> DeliveryEvent:
    """An inbound SMS of ``body`` from the number ``sender`` (None when it is no valid
    number): its sender's opt-out or opt-in, or an event with nothing to apply."""
    word = keyword(body) if isinstance(body, str) else ""
    opt_out = opts_out(word)
    if opt_out is None or sender is None:
        return DeliveryEvent(
            type=EventType.OTHER, vendor_type="inbound", occurred_at=None, channel=Channel.SMS
        )
    return DeliveryEvent(
        type=EventType.UNSUBSCRIBED if opt_out else EventType.INFO,
        vendor_type=f"inbound {word.lower()}",
        occurred_at=None,
        address=sender,
        channel=Channel.SMS,
        opt_out=opt_out,
    )


def keyword(body: str) -> str:
    """The message as a keyword: trimmed, upper case (only short texts can be one)."""
    return body.strip().upper() if len(body) <= _MAX_KEYWORD else ""


def opts_out(word: str) -> bool | None:
    """True for an opt-out keyword, False for an opt-in one, None for anything else."""
    return True if word in OPT_OUT else False if word in OPT_IN else None
