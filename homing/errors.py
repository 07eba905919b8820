"""Homing's exception tree. Domain errors know nothing about HTTP.

    HomingError
    ├── ConfigError               settings or master key unusable
    ├── StoreError                the database failed (driver errors are wrapped)
    │   ├── StoreUnavailable      the database cannot be reached right now
    │   │   ├── RateLimitUnavailable  the rate-limit store is down and fails closed
    │   │   ├── StorageFull           the database's disk is full
    │   │   ├── StorageReadOnly       the database's storage is read-only
    │   │   └── StoragePermissionDenied  Homing may not write to the database
    │   └── UnstorableValue       the database refused a value of the request (also
    │                             an InvalidRequest)
    ├── NotFound                  no such object for this tenant
    ├── Conflict                  the object is not in a state that allows this
    │   ├── IdempotencyConflict   same Idempotency-Key, different request
    │   └── NotReschedulable      the job is no longer waiting to be sent (claimed,
    │                             ended, or ordered behind another)
    ├── InvalidRequest            the request is well formed but not acceptable
    │   ├── InvalidCredentials    the provider rejected the credentials
    │   ├── UnknownProvider       a pinned provider the tenant does not have
    │   ├── NoProvider            a send on a channel the tenant has no enabled
    │   │                         provider for
    │   ├── NoSender              an SMS with no sender, and no enabled SMS provider
    │   │                         that has one
    │   ├── UnknownRecipient      a send names a recipient the tenant does not have
    │   ├── RecipientUnreachable  the recipient has no address on the send's channel
    │   ├── UnknownCategory       a send or preference names a category the tenant
    │   │                         does not have
    │   ├── SendAtTooFar          a ``send_at`` further ahead than Homing keeps jobs waiting
    │   ├── PublicUrlRequired     a marketing email needs HOMING_PUBLIC_URL for its
    │   │                         unsubscribe link
    │   ├── UrlRefused            a webhook URL Homing will not call (SSRF guard)
    │   ├── EndpointRefused       a provider endpoint Homing will not call (not the
    │   │                         vendor's API, nor allowed by the operator)
    │   ├── ProviderTimeout       a provider call did not finish within its deadline
    │   └── PayloadTooLarge       a payload over its configured size limit
    ├── HostRefused               the request names a host this Homing is not
    ├── Unauthenticated           no usable API key
    ├── Forbidden                 authenticated, but not allowed to do this
    │   ├── TenantSuspended       the tenant is suspended
    │   └── QuotaExceeded         a monthly quota is used up, or the tenant holds as
    │                             many of a kind (keys, domains, categories…) as it may
    ├── RateLimited               too many requests in the rate window
    ├── Overloaded                a bound of this process is reached (open streams)
    └── DecryptionError           a sealed secret does not open with any known key

Provider outcomes are not exceptions of this tree: adapters raise
``homing.providers.base.ProviderFailure``, which carries a failure class.
"""

from __future__ import annotations

from typing import Any


class HomingError(Exception):
    """Something went wrong in Homing."""

    code = "internal_error"

    def __init__(self, message: str | None = None, details: dict[str, Any] | None = None) -> None:
        self.message = message or (self.__doc__ or self.code).strip()
        self.details = details or {}
        super().__init__(self.message)


class ConfigError(HomingError):
    """The configuration cannot be used."""

    code = "config_error"


class StoreError(HomingError):
    """The database failed."""

    code = "store_error"


class StoreUnavailable(StoreError):
    """The database is unavailable; try again shortly."""

    code = "unavailable"


class RateLimitUnavailable(StoreUnavailable):
    """The rate limiter cannot be reached; try again shortly."""

    code = "rate_limit_unavailable"


class StorageFull(StoreUnavailable):
    """The database's disk is full: nothing can be stored until space is freed."""

    code = "storage_full"


class StorageReadOnly(StoreUnavailable):
    """The database's storage is read-only: nothing can be stored until it is writable."""

    code = "storage_read_only"


class StoragePermissionDenied(StoreUnavailable):
    """Homing may not write to the database: permission denied (its folder, files or tables)."""

    code = "storage_permission_denied"


class NotFound(HomingError):
    """Not found."""

    code = "not_found"


class Conflict(HomingError):
    """The object is not in a state that allows this."""

    code = "conflict"


class IdempotencyConflict(Conflict):
    """This Idempotency-Key was already used with a different request."""

    code = "idempotency_conflict"


class NotReschedulable(Conflict):
    """Only a PENDING job no worker has claimed yet can be rescheduled."""

    code = "not_reschedulable"


class InvalidRequest(HomingError):
    """The request is not acceptable."""

    code = "invalid_request"


class UnstorableValue(StoreError, InvalidRequest):
    """The request holds a value the database cannot store or compare (e.g. a NUL character)."""

    code = "invalid_request"


class InvalidCredentials(InvalidRequest):
    """The provider rejected these credentials."""

    code = "invalid_credentials"


class UnknownProvider(InvalidRequest):
    """No enabled provider of this tenant matches."""

    code = "unknown_provider"


class NoProvider(InvalidRequest):
    """No enabled provider of this tenant sends on this channel: register or enable one."""

    code = "no_provider"


class NoSender(InvalidRequest):
    """This SMS names no sender (``from``), and no enabled SMS provider of this tenant has
    one (``config.from`` or ``config.messaging_service_sid``)."""

    code = "no_sender"


class UnknownRecipient(InvalidRequest):
    """No recipient of this tenant has this external id."""

    code = "unknown_recipient"


class RecipientUnreachable(InvalidRequest):
    """The recipient has no address on this channel."""

    code = "recipient_unreachable"


class PublicUrlRequired(InvalidRequest):
    """A marketing email carries a one-click unsubscribe link, built on HOMING_PUBLIC_URL,
    which this Homing does not have."""

    code = "public_url_required"


class UnknownCategory(InvalidRequest):
    """The tenant has no category of this key."""

    code = "unknown_category"


class SendAtTooFar(InvalidRequest):
    """send_at is further ahead than a job may wait."""

    code = "send_at_too_far"


class UrlRefused(InvalidRequest):
    """Homing will not deliver to this URL."""

    code = "url_refused"


class EndpointRefused(InvalidRequest):
    """Homing will not call this provider endpoint."""

    code = "endpoint_refused"


class ProviderTimeout(InvalidRequest):
    """The provider did not answer within the call deadline."""

    code = "provider_timeout"


class PayloadTooLarge(InvalidRequest):
    """The payload is larger than allowed."""

    code = "payload_too_large"


class HostRefused(HomingError):
    """This request's Host is not one this Homing answers to (HOMING_ALLOWED_HOSTS)."""

    code = "host_not_allowed"


class Unauthenticated(HomingError):
    """A valid API key is required."""

    code = "unauthenticated"


class Forbidden(HomingError):
    """This credential may not do this."""

    code = "forbidden"


class TenantSuspended(Forbidden):
    """This tenant is suspended: it may read, but change nothing, and its jobs are held."""

    code = "tenant_suspended"


class QuotaExceeded(Forbidden):
    """A monthly quota is used up."""

    code = "quota_exceeded"


class RateLimited(HomingError):
    """Too many requests; slow down.

    ``retry_after`` is how many seconds until a request would be admitted.
    """

    code = "rate_limited"

    def __init__(
        self,
        message: str | None = None,
        details: dict[str, Any] | None = None,
        *,
        retry_after: int = 1,
    ) -> None:
        super().__init__(message, details)
        self.retry_after = retry_after


class Overloaded(HomingError):
    """This process is at one of its bounds right now; try again later."""

    code = "overloaded"


class DecryptionError(HomingError):
    """A sealed secret could not be opened."""

    code = "decryption_error"
