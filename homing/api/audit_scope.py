"""Which changing routes the audit log records, and why the others are not recorded.

Every ``POST``/``PUT``/``PATCH``/``DELETE`` route of the app (the API's and the
console's) is in exactly one of the two maps;
``tests/api/test_audit_log.py`` walks ``app.routes`` and fails on a route in neither,
so a route added later is refused until someone decides (docs/architecture.md, "The
audit log").
"""

from __future__ import annotations

from homing.models import AuditAction

__all__ = ["AUDITED", "EXEMPT"]

_A = AuditAction

# (method, route path template) → the actions it may record.
AUDITED: dict[tuple[str, str], frozenset[AuditAction]] = {
    ("POST", "/v1/providers"): frozenset({_A.PROVIDER_ADDED}),
    ("PATCH", "/v1/providers/{provider_id}"): frozenset(
        {_A.PROVIDER_UPDATED, _A.PROVIDER_REORDERED}
    ),
    ("DELETE", "/v1/providers/{provider_id}"): frozenset({_A.PROVIDER_REMOVED}),
    ("PUT", "/v1/providers/{provider_id}/inbound"): frozenset({_A.INBOUND_SECRET_ROTATED}),
    ("DELETE", "/v1/providers/{provider_id}/inbound"): frozenset({_A.INBOUND_SECRET_DELETED}),
    ("POST", "/v1/api-keys"): frozenset({_A.API_KEY_ISSUED}),
    ("DELETE", "/v1/api-keys/{key_id}"): frozenset({_A.API_KEY_REVOKED}),
    ("POST", "/v1/webhook-secret"): frozenset({_A.WEBHOOK_SECRET_CREATED}),
    ("POST", "/v1/webhook-secret/rotate"): frozenset({_A.WEBHOOK_SECRET_ROTATED}),
    ("POST", "/v1/feed-secret/rotate"): frozenset({_A.FEED_SECRET_ROTATED}),
    ("PUT", "/v1/feed-origins"): frozenset({_A.SETTINGS_UPDATED}),
    ("DELETE", "/v1/webhook-secret"): frozenset({_A.WEBHOOK_SECRET_DELETED}),
    ("POST", "/v1/webhook-endpoints/enable"): frozenset({_A.WEBHOOK_ENDPOINT_ENABLED}),
    ("POST", "/v1/suppressions"): frozenset({_A.SUPPRESSION_ADDED}),
    ("DELETE", "/v1/suppressions"): frozenset({_A.SUPPRESSION_REMOVED}),
    ("POST", "/v1/domains"): frozenset({_A.DOMAIN_ADDED}),
    ("DELETE", "/v1/domains/{domain_id}"): frozenset({_A.DOMAIN_REMOVED}),
    ("PATCH", "/v1/settings"): frozenset({_A.SETTINGS_UPDATED}),
    ("POST", "/v1/dead-letters/redrive"): frozenset({_A.DEAD_LETTERS_REDRIVEN}),
    ("POST", "/v1/dead-letters/purge"): frozenset({_A.DEAD_LETTERS_PURGED}),
    ("POST", "/admin/v1/dead-letters/redrive"): frozenset({_A.DEAD_LETTERS_REDRIVEN}),
    ("POST", "/admin/v1/dead-letters/purge"): frozenset({_A.DEAD_LETTERS_PURGED}),
    ("POST", "/admin/v1/tenants"): frozenset({_A.TENANT_CREATED}),
    ("PATCH", "/admin/v1/tenants/{tenant_id}"): frozenset(
        {_A.TENANT_UPDATED, _A.TENANT_PLAN_CHANGED}
    ),
    ("POST", "/admin/v1/tenants/{tenant_id}/suspend"): frozenset({_A.TENANT_SUSPENDED}),
    ("POST", "/admin/v1/tenants/{tenant_id}/unsuspend"): frozenset({_A.TENANT_RESUMED}),
}

# Templates and email layouts (docs/templates.md): each change in its own transaction.
AUDITED |= {
    ("POST", "/v1/templates"): frozenset({_A.TEMPLATE_CREATED}),
    ("DELETE", "/v1/templates/{ref}"): frozenset({_A.TEMPLATE_DELETED}),
    ("POST", "/v1/templates/{ref}/versions"): frozenset({_A.TEMPLATE_VERSION_ADDED}),
    ("PATCH", "/v1/templates/{ref}/versions/{version_id}"): frozenset({_A.TEMPLATE_VERSION_EDITED}),
    ("POST", "/v1/templates/{ref}/versions/{version_id}/publish"): frozenset(
        {_A.TEMPLATE_VERSION_PUBLISHED}
    ),
    ("POST", "/v1/layouts"): frozenset({_A.LAYOUT_CREATED}),
    ("DELETE", "/v1/layouts/{ref}"): frozenset({_A.LAYOUT_DELETED}),
    ("POST", "/v1/layouts/{ref}/versions"): frozenset({_A.LAYOUT_VERSION_ADDED}),
    ("PATCH", "/v1/layouts/{ref}/versions/{version_id}"): frozenset({_A.LAYOUT_VERSION_EDITED}),
    ("POST", "/v1/layouts/{ref}/versions/{version_id}/publish"): frozenset(
        {_A.LAYOUT_VERSION_PUBLISHED}
    ),
    # The console's template pages; the editor's one route saves a draft first, then
    # previews, publishes or queues a test email (a job, its own record).
    ("POST", "/t/{tenant_id}/templates"): frozenset({_A.TEMPLATE_CREATED}),
    ("POST", "/t/{tenant_id}/templates/{ref}/versions"): frozenset({_A.TEMPLATE_VERSION_ADDED}),
    ("POST", "/t/{tenant_id}/templates/{ref}/versions/{number}"): frozenset(
        {_A.TEMPLATE_VERSION_EDITED, _A.TEMPLATE_VERSION_PUBLISHED}
    ),
    # The console's layout pages, as the template pages (the editor's preview renders
    # a sample email after the save and changes nothing more).
    ("POST", "/t/{tenant_id}/layouts"): frozenset({_A.LAYOUT_CREATED}),
    ("POST", "/t/{tenant_id}/layouts/{ref}/versions"): frozenset({_A.LAYOUT_VERSION_ADDED}),
    ("POST", "/t/{tenant_id}/layouts/{ref}/versions/{number}"): frozenset(
        {_A.LAYOUT_VERSION_EDITED, _A.LAYOUT_VERSION_PUBLISHED}
    ),
}

# The console's changes (``homing.console``): the same actions as their API twins,
# recorded with the signed-in user as the actor (docs/architecture.md, "The audit log").
AUDITED |= {
    ("POST", "/t/{tenant_id}/api-keys"): frozenset({_A.API_KEY_ISSUED}),
    ("POST", "/t/{tenant_id}/api-keys/{key_id}/revoke"): frozenset({_A.API_KEY_REVOKED}),
    ("POST", "/t/{tenant_id}/dead-letters/redrive"): frozenset({_A.DEAD_LETTERS_REDRIVEN}),
    ("POST", "/t/{tenant_id}/dead-letters/purge"): frozenset({_A.DEAD_LETTERS_PURGED}),
    ("POST", "/t/{tenant_id}/domains/{domain_id}/remove"): frozenset({_A.DOMAIN_REMOVED}),
    ("POST", "/t/{tenant_id}/providers/{provider_id}/inbound"): frozenset(
        {_A.INBOUND_SECRET_ROTATED}
    ),
    ("POST", "/t/{tenant_id}/providers/{provider_id}/inbound/remove"): frozenset(
        {_A.INBOUND_SECRET_DELETED}
    ),
    ("POST", "/t/{tenant_id}/webhooks/endpoints/enable"): frozenset({_A.WEBHOOK_ENDPOINT_ENABLED}),
    ("POST", "/t/{tenant_id}/domains"): frozenset({_A.DOMAIN_ADDED}),
    ("POST", "/t/{tenant_id}/providers/{provider_id}/enabled"): frozenset({_A.PROVIDER_UPDATED}),
    ("POST", "/t/{tenant_id}/providers/{provider_id}/move"): frozenset({_A.PROVIDER_REORDERED}),
    ("POST", "/t/{tenant_id}/providers/new"): frozenset({_A.PROVIDER_ADDED}),
    ("POST", "/t/{tenant_id}/providers/{provider_id}/remove"): frozenset({_A.PROVIDER_REMOVED}),
    ("POST", "/t/{tenant_id}/providers/{provider_id}/pacing"): frozenset({_A.PROVIDER_UPDATED}),
    ("POST", "/t/{tenant_id}/providers/{provider_id}/pacing/reset"): frozenset(
        {_A.PROVIDER_UPDATED}
    ),
    ("POST", "/t/{tenant_id}/suppressions"): frozenset({_A.SUPPRESSION_ADDED}),
    ("POST", "/t/{tenant_id}/suppressions/remove"): frozenset({_A.SUPPRESSION_REMOVED}),
    ("POST", "/t/{tenant_id}/webhooks/secret"): frozenset({_A.WEBHOOK_SECRET_CREATED}),
    ("POST", "/t/{tenant_id}/webhooks/secret/rotate"): frozenset({_A.WEBHOOK_SECRET_ROTATED}),
    ("POST", "/t/{tenant_id}/webhooks/secret/delete"): frozenset({_A.WEBHOOK_SECRET_DELETED}),
    ("POST", "/t/{tenant_id}/users/invite"): frozenset({_A.USER_INVITED}),
    ("POST", "/t/{tenant_id}/invitations/{invitation_id}/revoke"): frozenset(
        {_A.INVITATION_REVOKED}
    ),
    ("POST", "/t/{tenant_id}/users/{user_id}/role"): frozenset({_A.MEMBER_ROLE_CHANGED}),
    ("POST", "/t/{tenant_id}/users/{user_id}/remove"): frozenset({_A.MEMBER_REMOVED}),
    # The invitee is the actor: the user the invitation made or signed in.
    ("POST", "/invitations/{token}"): frozenset({_A.INVITATION_ACCEPTED}),
    ("POST", "/invitations/{token}/mail"): frozenset({_A.INVITATION_MAILED}),
    ("POST", "/operator/tenants/{tenant_id}/suspend"): frozenset({_A.TENANT_SUSPENDED}),
    ("POST", "/operator/tenants/{tenant_id}/resume"): frozenset({_A.TENANT_RESUMED}),
    ("POST", "/operator/tenants/{tenant_id}/plan"): frozenset(
        {_A.TENANT_PLAN_CHANGED, _A.TENANT_UPDATED}
    ),
    ("POST", "/operator/dead-letters/redrive"): frozenset({_A.DEAD_LETTERS_REDRIVEN}),
    # A recipient's links (docs/recipients.md "Links"): the recipient is the actor,
    # recorded as Homing's ("recipient link"); a replay changes nothing, records nothing.
    ("POST", "/u/{token}"): frozenset({_A.RECIPIENT_UNSUBSCRIBED}),
    ("POST", "/p/{token}"): frozenset({_A.RECIPIENT_PREFERENCES_CHANGED}),
}

# Recipients, categories and preferences, and erasure (docs/recipients.md): each event
# names the recipient's row id (or the category's key, or an erased address's keyed
# hash) and the fields changed, never their values.
AUDITED |= {
    ("PUT", "/v1/recipients/{external_id}"): frozenset(
        {_A.RECIPIENT_CREATED, _A.RECIPIENT_UPDATED}
    ),
    ("DELETE", "/v1/recipients/{external_id}"): frozenset({_A.RECIPIENT_ERASED}),
    ("PATCH", "/v1/recipients/{external_id}/preferences"): frozenset(
        {_A.RECIPIENT_PREFERENCES_CHANGED}
    ),
    ("PUT", "/v1/categories/{key}"): frozenset({_A.CATEGORY_CREATED, _A.CATEGORY_UPDATED}),
    ("POST", "/v1/erasure"): frozenset({_A.ADDRESS_ERASED}),
}

# (method, route path template) → why it changes no configuration worth an event.
EXEMPT: dict[tuple[str, str], str] = {
    ("POST", "/v1/notifications/email"): "sending is the service itself; the job is its record",
    ("POST", "/v1/notifications/email/batch"): "sending; each job is its own record",
    ("POST", "/v1/notifications/webhook"): "sending; the job is its record",
    ("POST", "/v1/notifications/sms"): "sending; the job is its record",
    ("POST", "/v1/notifications/sms/batch"): "sending; each job is its own record",
    ("POST", "/v1/notifications/chat"): "sending; the job is its record",
    ("POST", "/v1/notifications/in-app"): "sending; the job and its feed item are its record",
    ("POST", "/v1/notifications"): "sending; the notification, its steps and jobs are its record",
    ("POST", "/feed/{item_id}/{mark}"): "a recipient marks its own feed item; the item's "
    "seen_at, read_at and archived_at are its record",
    ("POST", "/v1/jobs/{job_id}/retry"): "sends one job again, like an accept; its attempts "
    "record it",
    ("POST", "/v1/jobs/{job_id}/cancel"): "ends one job, like its delivery would; the job's "
    "CANCELLED status and time are its record",
    ("PATCH", "/v1/jobs/{job_id}"): "moves one waiting job, like its send_at at accept would; "
    "the job's send_at, schedule_reason and updated_at are its record",
    ("POST", "/v1/domains/{domain_id}/verify"): "asks the provider to check DNS; no setting "
    "changes",
    ("POST", "/inbound/billing/{vendor}"): "a vendor's event, kept in the inbound journal",
    ("POST", "/inbound/{provider}/{account_id}"): "a provider's event, kept in the inbound journal",
    ("POST", "/v1/templates/{ref}/preview"): "renders with the given data; changes nothing",
}

# The console's routes that change no configuration.
_SESSION = "opens or ends a console session of its own user; no configuration changes"
EXEMPT |= {
    ("POST", "/sign-in"): _SESSION,
    ("POST", "/sign-out"): _SESSION,
    ("POST", "/sign-out/everywhere"): _SESSION,
    ("POST", "/t/{tenant_id}/domains/{domain_id}/verify"): EXEMPT[
        ("POST", "/v1/domains/{domain_id}/verify")
    ],
    ("POST", "/t/{tenant_id}/messages/{job_id}/retry"): EXEMPT[("POST", "/v1/jobs/{job_id}/retry")],
    # A test send is a send like the API's: the job (marked a test) is its record.
    ("POST", "/t/{tenant_id}/send-test"): EXEMPT[("POST", "/v1/notifications/email")],
}
