"""The SDK's exceptions: one class per error ``code`` Homing answers with.

    HomingError                 base: status, code, message, details, request_id
    ├── HomingConnectionError   no answer: connection refused, reset, or a timeout
    │   └── HomingTimeout       the call's timeout passed
    └── ApiError                Homing answered with an error envelope
        ├── BadRequestError ... one subclass per status (400, 401, 403, 404, ...)
        │   └── <Code>Error     one subclass per ``code`` (``RateLimitedError``, ...)
        └── (unknown codes raise the status class, unknown statuses ApiError)

``error_for(status, body, request_id)`` picks the class; ``CODES`` maps each code to it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CODES", "ApiError", "HomingConnectionError", "HomingError", "HomingTimeout"]


class HomingError(Exception):
    """Something went wrong calling Homing."""

    status: int | None = None
    code: str = "client_error"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status if status is not None else type(self).status
        self.code = code or type(self).code
        self.details = details or {}
        self.request_id = request_id
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r})"


class HomingConnectionError(HomingError):
    """Homing did not answer."""

    code = "connection_error"


class HomingTimeout(HomingConnectionError):
    """The call did not finish within its timeout."""

    code = "timeout"


class ApiError(HomingError):
    """Homing answered with an error."""

    code = "http_error"


class BadRequestError(ApiError):
    """HTTP 400."""

    status = 400


class AuthenticationError(ApiError):
    """HTTP 401."""

    status = 401


class PermissionDeniedError(ApiError):
    """HTTP 403."""

    status = 403


class NotFoundError(ApiError):
    """HTTP 404."""

    status = 404


class MethodNotAllowedError(ApiError):
    """HTTP 405."""

    status = 405


class ConflictError(ApiError):
    """HTTP 409."""

    status = 409


class PayloadTooLargeError(ApiError):
    """HTTP 413."""

    status = 413


class UnsupportedMediaTypeError(ApiError):
    """HTTP 415."""

    status = 415


class UnprocessableError(ApiError):
    """HTTP 422."""

    status = 422


class RateLimitError(ApiError):
    """HTTP 429."""

    status = 429


class InternalServerError(ApiError):
    """HTTP 500."""

    status = 500


class ServiceUnavailableError(ApiError):
    """HTTP 503."""

    status = 503


STATUS_CLASSES: dict[int, type[ApiError]] = {
    cls.status: cls
    for cls in (
        BadRequestError,
        AuthenticationError,
        PermissionDeniedError,
        NotFoundError,
        MethodNotAllowedError,
        ConflictError,
        PayloadTooLargeError,
        UnsupportedMediaTypeError,
        UnprocessableError,
        RateLimitError,
        InternalServerError,
        ServiceUnavailableError,
    )
}


class MalformedRequestError(BadRequestError):
    code = "malformed_request"


class HostNotAllowedError(BadRequestError):
    code = "host_not_allowed"


class UnauthenticatedError(AuthenticationError):
    code = "unauthenticated"


class ForbiddenError(PermissionDeniedError):
    code = "forbidden"


class TenantSuspendedError(PermissionDeniedError):
    code = "tenant_suspended"


class QuotaExceededError(PermissionDeniedError):
    code = "quota_exceeded"


class ObjectNotFoundError(NotFoundError):
    code = "not_found"


class MethodNotAllowedCodeError(MethodNotAllowedError):
    code = "method_not_allowed"


class StateConflictError(ConflictError):
    code = "conflict"


class NotReschedulableError(ConflictError):
    code = "not_reschedulable"


class PayloadTooLargeCodeError(PayloadTooLargeError):
    code = "payload_too_large"


class UnsupportedMediaTypeCodeError(UnsupportedMediaTypeError):
    code = "unsupported_media_type"


class ValidationError(UnprocessableError):
    code = "validation_error"


class InvalidRequestError(UnprocessableError):
    code = "invalid_request"


class IdempotencyConflictError(UnprocessableError):
    code = "idempotency_conflict"


class InvalidCredentialsError(UnprocessableError):
    code = "invalid_credentials"


class UnknownProviderError(UnprocessableError):
    code = "unknown_provider"


class NoProviderError(UnprocessableError):
    """No enabled provider of the tenant sends on the message's channel."""

    code = "no_provider"


class NoSenderError(UnprocessableError):
    """An SMS with no ``from``, and no enabled SMS provider with a sender of its own."""

    code = "no_sender"


class UnknownRecipientError(UnprocessableError):
    code = "unknown_recipient"


class RecipientUnreachableError(UnprocessableError):
    code = "recipient_unreachable"


class UnknownCategoryError(UnprocessableError):
    code = "unknown_category"


class SendAtTooFarError(UnprocessableError):
    code = "send_at_too_far"


class PublicUrlRequiredError(UnprocessableError):
    code = "public_url_required"


class UrlRefusedError(UnprocessableError):
    code = "url_refused"


class EndpointRefusedError(UnprocessableError):
    code = "endpoint_refused"


class ProviderTimeoutError(UnprocessableError):
    code = "provider_timeout"


class DomainsUnsupportedError(UnprocessableError):
    code = "domains_unsupported"


class DomainNotVerifiedError(UnprocessableError):
    code = "domain_not_verified"


class ProviderError(UnprocessableError):
    code = "provider_error"


class TemplateError(UnprocessableError):
    code = "template_error"


class RateLimitedError(RateLimitError):
    code = "rate_limited"


class InternalError(InternalServerError):
    code = "internal_error"


class ConfigError(InternalServerError):
    code = "config_error"


class StoreError(InternalServerError):
    code = "store_error"


class DecryptionError(InternalServerError):
    code = "decryption_error"


class UnavailableError(ServiceUnavailableError):
    code = "unavailable"


class StorageFullError(ServiceUnavailableError):
    code = "storage_full"


class StorageReadOnlyError(ServiceUnavailableError):
    code = "storage_read_only"


class StoragePermissionDeniedError(ServiceUnavailableError):
    code = "storage_permission_denied"


class RateLimitUnavailableError(ServiceUnavailableError):
    code = "rate_limit_unavailable"


class OverloadedError(ServiceUnavailableError):
    code = "overloaded"


def _code_classes() -> dict[tuple[int, str], type[ApiError]]:
    found: dict[tuple[int, str], type[ApiError]] = {}
    for status_class in STATUS_CLASSES.values():
        for cls in status_class.__subclasses__():
            found[(status_class.status, cls.code)] = cls  # type: ignore[index]
    return found


# (status, code) -> the class raised for it: a code may be answered with two statuses.
CODES: dict[tuple[int, str], type[ApiError]] = _code_classes()


def error_for(
    status: int, body: Any, request_id: str | None, retry_after: float | None = None
) -> ApiError:
    """The exception for one error response (its parsed JSON body, or None)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = {}
    code = str(error.get("code") or "http_error")
    message = str(error.get("message") or f"HTTP {status}")
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    cls = CODES.get((status, code)) or STATUS_CLASSES.get(status, ApiError)
    return cls(
        message,
        status=status,
        code=code,
        details=details,
        request_id=request_id,
        retry_after=retry_after,
    )
