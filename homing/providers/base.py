"""The narrow contract every provider adapter keeps.

An adapter is built per call from the tenant's decrypted credentials, its config and
an injected ``httpx.AsyncClient``; it never reads settings, never touches the
database, and never logs a credential. It either returns a ``SendResult`` or raises
``ProviderFailure`` carrying one of the failure classes of docs/architecture.md,
"Failure classes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import httpx

from homing.addresses import InvalidAddress, Mailbox, parse_mailbox
from homing.models import EmailContent, FailureClass, SmsContent


@dataclass(frozen=True, slots=True)
class OutgoingEmail:
    """What an email adapter sends. ``job_id`` travels to the provider so events map back."""

    job_id: str
    content: EmailContent
    idempotency_key: str | None = None


def mailboxes(content: EmailContent, provider: str) -> tuple[Mailbox, Mailbox]:
    """(to, from) of ``content``, each the one mailbox ``homing.addresses`` reads, so
    every adapter sends the canonical form (and a mail server the bare address in its
    envelope).
    ProviderFailure (message_permanent) when either is not exactly one mailbox: a job
    stored before the API parsed addresses is refused, never sent as it came."""
    try:
        return parse_mailbox(content.to), parse_mailbox(content.from_)
    except InvalidAddress:
        raise ProviderFailure(
            FailureClass.MESSAGE_PERMANENT, f"{provider}: to or from is not one email address"
        ) from None


@dataclass(frozen=True, slots=True)
class SendResult:
    """A provider's acceptance of one message: its id there and what it answered."""

    provider_message_id: str | None
    status_code: int | None
    response_excerpt: str | None = None


class ProviderFailure(Exception):
    """A provider call failed; ``failure_class`` says what the dispatcher does next.

    ``detail`` is safe to store and show: it never contains a credential.
    ``retry_after`` (seconds) is set for throttling when the provider said when.
    ``response_excerpt`` is the start of the response body where it is worth keeping
    (webhooks).
    """

    def __init__(
        self,
        failure_class: FailureClass,
        detail: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        response_excerpt: str | None = None,
        suppress: str | None = None,
    ) -> None:
        super().__init__(detail)
        self.failure_class = failure_class
        self.detail = detail
        self.status_code = status_code
        self.retry_after = retry_after
        self.response_excerpt = response_excerpt
        # The provider refuses this recipient for good (Twilio 21610: they replied
        # STOP): the reason to suppress them for the tenant with.
        self.suppress = suppress

    def __repr__(self) -> str:
        return (
            f"ProviderFailure({self.failure_class.value!r}, {self.detail!r}, "
            f"status_code={self.status_code!r}, retry_after={self.retry_after!r})"
        )


class EmailProvider(Protocol):
    """One email vendor. ``supports_idempotency``: sending again after a timeout is safe."""

    name: ClassVar[str]
    supports_idempotency: ClassVar[bool]

    async def send(self, email: OutgoingEmail) -> SendResult: ...

    async def check_credentials(self) -> None:
        """Raise ``homing.errors.InvalidCredentials`` when the provider rejects them."""
        ...


class EmailProviderFactory(Protocol):
    """Builds an email adapter from decrypted credentials, config and an injected HTTP
    client."""

    def __call__(
        self,
        credentials: dict[str, Any],
        config: dict[str, Any],
        http: httpx.AsyncClient,
    ) -> EmailProvider: ...


def text(value: Any) -> str:
    """``value`` as a string, ``""`` for a missing field of a vendor's reply."""
    return "" if value is None else str(value)


# SMS ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutgoingSms:
    """What an SMS adapter sends: the job id (where the vendor carries a reference) and
    the message, its recipient already E.164."""

    job_id: str
    content: SmsContent


class SmsProvider(Protocol):
    """One SMS vendor."""

    name: ClassVar[str]
    supports_idempotency: ClassVar[bool]

    async def send(self, sms: OutgoingSms) -> SendResult: ...

    async def check_credentials(self) -> None:
        """Raise ``homing.errors.InvalidCredentials`` when the provider rejects them."""
        ...


class SmsProviderFactory(Protocol):
    """Builds an SMS adapter from decrypted credentials, config and an injected client."""

    def __call__(
        self,
        credentials: dict[str, Any],
        config: dict[str, Any],
        http: httpx.AsyncClient,
    ) -> SmsProvider: ...
