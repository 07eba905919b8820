"""What a test API key may do: send (to the sandbox only), read, and retry test jobs.

A test key (``hk_test_…``) exists so that CI and staging can exercise the API without
touching live state. Its jobs already go only to sandbox providers; this module keeps
it away from everything else live: the tenant's configuration (providers, domains,
suppressions, inbound and webhook secrets, API keys), live jobs and the audit log
(``GET /v1/audit-log`` is live-only: it is deliberately not on the list). The rule is
default-deny and lives here once: every authenticated ``/v1`` route resolves its caller
through ``homing.api.deps`` (``get_principal`` or ``sending``), which calls
``check_key_scope``; a test key is refused with 403 ``forbidden`` on any route that is
not in ``TEST_KEY_ROUTES``. A route added later is therefore live-only until someone
puts it on the list, and ``tests/adversary/test_test_keys.py`` walks ``app.routes``
to prove no ``/v1`` route escapes the rule.

Routes on the list that could still reach live state narrow what they touch: job reads
and retries see only the key's test jobs (``homing.store.jobs``). Reads of
configuration are allowed where they show nothing secret (previews only); the API-key
list is live-only, as it always was.
"""

from __future__ import annotations

from starlette.requests import Request

from homing.domain.tenants import Principal
from homing.errors import Forbidden

__all__ = ["TEST_KEY_ROUTES", "check_key_scope"]

# (method, route path template): what a test key may call.
TEST_KEY_ROUTES: frozenset[tuple[str, str]] = frozenset(
    {
        # Sending: a test key's jobs go only to sandbox providers.
        ("POST", "/v1/notifications/email"),
        ("POST", "/v1/notifications/email/batch"),
        ("POST", "/v1/notifications/webhook"),
        ("POST", "/v1/notifications/sms"),
        ("POST", "/v1/notifications/sms/batch"),
        ("POST", "/v1/notifications/chat"),
        # Its own test jobs only (the store filters by the key's kind).
        ("GET", "/v1/jobs"),
        ("GET", "/v1/jobs/{job_id}"),
        ("POST", "/v1/jobs/{job_id}/retry"),
        ("POST", "/v1/jobs/{job_id}/cancel"),
        ("PATCH", "/v1/jobs/{job_id}"),
        # Reads that show no secret.
        ("GET", "/v1/usage"),
        ("GET", "/v1/reports/events"),
        ("GET", "/v1/suppressions"),
        ("GET", "/v1/domains"),
        ("GET", "/v1/domains/{domain_id}"),
        ("GET", "/v1/providers"),
        ("GET", "/v1/providers/{provider_id}/inbound"),
        ("GET", "/v1/webhook-secret"),
        ("GET", "/v1/webhook-endpoints/gone"),
        ("GET", "/v1/settings"),
    }
)


def check_key_scope(principal: Principal, request: Request) -> None:
    """Refuse a test key (Forbidden) on a route outside ``TEST_KEY_ROUTES``."""
    if not principal.test_key:
        return
    route = request.scope.get("route")
    template = getattr(route, "path", None)
    if (request.method, template) not in TEST_KEY_ROUTES:
        raise Forbidden(
            "a test API key touches test state only; this needs a live API key",
            {"key": "test"},
        )
