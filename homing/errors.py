"""Homing's exception tree. Domain errors know nothing about HTTP.

    HomingError
    ├── ConfigError               settings or master key unusable
    ├── StoreError                the database failed (driver errors are wrapped)
    │   └── StoreUnavailable      the database cannot be reached right now
    ├── NotFound                  no such object for this tenant
    ├── Conflict                  the object is not in a state that allows this
    │   └── IdempotencyConflict   same Idempotency-Key, different request
    ├── InvalidRequest            the request is well formed but not acceptable
    │   ├── InvalidCredentials    the provider rejected the credentials
    │   └── UnknownProvider       a pinned provider the tenant does not have
    ├── Unauthenticated           no usable API key
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


class NotFound(HomingError):
    """Not found."""

    code = "not_found"


class Conflict(HomingError):
    """The object is not in a state that allows this."""

    code = "conflict"


class IdempotencyConflict(Conflict):
    """This Idempotency-Key was already used with a different request."""

    code = "idempotency_conflict"


class InvalidRequest(HomingError):
    """The request is not acceptable."""

    code = "invalid_request"


class InvalidCredentials(InvalidRequest):
    """The provider rejected these credentials."""

    code = "invalid_credentials"


class UnknownProvider(InvalidRequest):
    """No enabled provider of this tenant matches."""

    code = "unknown_provider"


class Unauthenticated(HomingError):
    """A valid API key is required."""

    code = "unauthenticated"


class DecryptionError(HomingError):
    """A sealed secret could not be opened."""

    code = "decryption_error"
