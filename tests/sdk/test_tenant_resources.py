"""The Python SDK's wrappers of the rest of the tenant API against a real ``homing run``
and the sandbox, over real HTTP: notifications, in-app and feeds, layouts, template
versions, erasure, scheduling, webhook secrets and endpoints, inbound secrets, API keys,
sending domains, settings, usage, reports, the audit log and dead letters. Each call
reaches its route and its answer parses into its model; the async client the same."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from homing_client import AsyncClient, Client, errors, models

from tests.sdk.conftest import Server

FROM = "app@acme.example"


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[Client]:
    with Client(base_url=server.url, api_key=server.api_key) as sdk:
        yield sdk


@pytest.fixture(scope="module")
def resend(client: Client, server: Server) -> models.ProviderPublic:
    return client.providers.create(
        channel="email",
        provider="resend",
        credentials={"api_key": "re_sdk_test_key_123456"},
        config={"base_url": server.sandbox_provider("resend")},
    )


def _key(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _job_status(client: Client, job_id: str, wanted: str) -> models.JobPublic:
    deadline = time.monotonic() + 20
    while True:
        job = client.jobs.get(job_id)
        if job.status == wanted or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def test_a_notification_goes_to_a_recipient_and_its_in_app_item_reaches_the_feed(
    client: Client, resend: models.ProviderPublic
) -> None:
    template = _key("report")
    client.templates.create(key=template)
    version = client.templates.create_version(
        template,
        email={"subject": "Report {{ n }}", "text": "Report {{ n }} is ready"},
        in_app={"title": "Report {{ n }}", "body": "Report {{ n }} is ready"},
    )
    client.templates.publish_version(template, version.id)
    person = _key("user")
    client.recipients.put(person, email="ada@example.com")
    sent = client.notifications.send(
        recipient=person,
        template=template,
        channels=["in_app", "email"],
        strategy="all",
        data={"n": 7},
        from_=FROM,
    )
    assert isinstance(sent, models.NotificationPublic)
    assert [s.channel for s in sent.steps] == ["in_app", "email"]
    assert sent.steps[0].status == "accepted"
    shown = client.notifications.get(sent.id)
    assert (shown.id, shown.template, shown.recipient) == (sent.id, template, person)
    email_job = shown.steps[1].job_id
    assert email_job is not None
    assert _job_status(client, email_job, "COMPLETED").status == "COMPLETED"
    queued = client.in_app.send(recipient=person, title="Hello", body="Second item")
    assert isinstance(queued, models.Queued)
    page = client.feed.page(person, limit=1)
    assert isinstance(page, models.FeedPagePublic)
    assert page.unread_count == 2 and len(page.data) == 1 and page.next_cursor
    items = list(client.feed.list(person, limit=1))
    assert [item.body for item in items] == ["Second item", "Report 7 is ready"]
    with pytest.raises(errors.ObjectNotFoundError):
        client.notifications.get(str(uuid.uuid4()))


def test_the_feed_secret_and_origins_are_set_through_the_sdk(client: Client) -> None:
    person = _key("reader")
    client.recipients.put(person, email="reader@example.com")
    old = client.recipients.feed_token(person).token
    issued = client.feed.rotate_secret()
    assert isinstance(issued, models.FeedSecretIssued) and issued.secret
    assert client.recipients.feed_token(person).token != old
    origins = client.feed.set_origins(["https://app.acme.example"])
    assert isinstance(origins, models.FeedOrigins)
    assert [o.root for o in client.feed.origins().origins] == ["https://app.acme.example"]
    assert client.feed.set_origins([]).origins == []
    with pytest.raises(errors.InvalidRequestError):
        client.feed.set_origins(["https://app.acme.example/with/a/path"])


def test_a_layout_is_created_versioned_published_listed_and_deleted(client: Client) -> None:
    key = _key("brand")
    created = client.layouts.create(key=key, name="Brand")
    assert isinstance(created, models.LayoutPublic) and created.name == "Brand"
    assert client.layouts.get(key).id == created.id
    assert key in [layout.key for layout in client.layouts.list(limit=1)]
    draft = client.layouts.create_version(key, html="<main>{{ content }}</main>")
    assert isinstance(draft, models.LayoutVersionPublic) and draft.state == "draft"
    edited = client.layouts.update_version(key, draft.id, html="<div>{{ content }}</div>")
    assert edited.html == "<div>{{ content }}</div>"
    assert client.layouts.get_version(created.id, draft.id).html == edited.html
    published = client.layouts.publish_version(key, draft.id)
    assert published.state == "published"
    second = client.layouts.create_version(key, html="<p>{{ content }}</p>")
    numbers = [v.number for v in client.layouts.versions(key, limit=1)]
    assert sorted(numbers) == sorted({draft.number, second.number})
    client.layouts.delete(key)
    with pytest.raises(errors.ObjectNotFoundError):
        client.layouts.get(key)


def test_template_versions_are_listed_read_and_the_template_deleted(client: Client) -> None:
    key = _key("notice")
    client.templates.create(key=key)
    first = client.templates.create_version(key, sms={"body": "One"})
    second = client.templates.create_version(key, sms={"body": "Two"})
    assert {v.id for v in client.templates.versions(key, limit=1)} == {first.id, second.id}
    read = client.templates.get_version(key, second.id)
    assert isinstance(read, models.VersionPublic) and read.sms == {"body": "Two"}
    client.templates.delete(key)
    with pytest.raises(errors.ObjectNotFoundError):
        client.templates.get(key)


def test_erasure_of_an_address_and_of_a_recipient_answer_what_was_erased(
    client: Client,
) -> None:
    client.suppressions.add("erase-me@example.com")
    erased = client.erasure.erase("erase-me@example.com", channel="email")
    assert isinstance(erased, models.ErasurePublic) and erased.complete
    assert erased.kept_as_hash.get("suppressions") == 1
    person = _key("gone")
    client.recipients.put(person, email="gone@example.com")
    answer = client.recipients.delete(person)
    assert isinstance(answer, models.ErasurePublic) and answer.erased.get("recipients") == 1
    with pytest.raises(errors.ValidationError):
        client.erasure.erase("x" * 5000, channel="email")


def test_a_scheduled_job_is_rescheduled(client: Client, resend: models.ProviderPublic) -> None:
    later = datetime.now(UTC) + timedelta(days=1)
    queued = client.email.send(
        to="later@example.com", from_=FROM, subject="s", text="t", send_at=later.isoformat()
    )
    moved_to = (later + timedelta(hours=2)).replace(microsecond=0)
    moved = client.jobs.reschedule(queued.id, send_at=moved_to)
    assert isinstance(moved, models.JobSummary)
    assert moved.send_at == moved_to
    text = (datetime.now(UTC) + timedelta(days=20)).strftime("%Y-%m-%dT%H:%M:%SZ")
    again = client.jobs.reschedule(queued.id, send_at=text)
    assert again.send_at == datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    with pytest.raises(errors.SendAtTooFarError):
        client.jobs.reschedule(queued.id, send_at=datetime.now(UTC) + timedelta(days=400))


def test_the_webhook_secret_is_read_rotated_and_deleted(client: Client) -> None:
    created = client.webhooks.create_secret()
    status = client.webhooks.secret()
    assert isinstance(status, models.WebhookSecretStatus) and status.configured
    assert status.preview and status.preview != created.secret
    rotated = client.webhooks.rotate_secret()
    assert rotated.secret != created.secret
    assert client.webhooks.secret().previous_preview
    client.webhooks.delete_secret()
    assert client.webhooks.secret().configured is False
    assert client.webhooks.gone_endpoints() == []
    with pytest.raises(errors.NotFoundError):
        client.webhooks.enable_endpoint("https://hooks.acme.example/never-gone")


def test_an_inbound_secret_is_set_read_and_deleted(
    client: Client, resend: models.ProviderPublic
) -> None:
    secret = "whsec_" + "U2RrSW5ib3VuZFNlY3JldDEyMzQ1Njc4OTA="
    put = client.providers.set_inbound(resend.id, signing_secret=secret)
    assert isinstance(put, models.InboundSecretPublic) and put.provider == "resend"
    assert secret not in put.model_dump_json()
    assert client.providers.inbound(resend.id).kind == put.kind
    client.providers.delete_inbound(resend.id)
    with pytest.raises(errors.NotFoundError):
        client.providers.inbound(resend.id)


def test_an_api_key_is_issued_used_listed_and_revoked(client: Client, server: Server) -> None:
    issued = client.api_keys.create(name="sdk-second")
    assert isinstance(issued, models.ApiKeyIssued) and issued.key.startswith(issued.prefix)
    assert issued.id in [key.id for key in client.api_keys.list()]
    with Client(base_url=server.url, api_key=issued.key) as second:
        usage = second.usage.get()
        assert isinstance(usage, models.UsagePublic) and usage.plan
        client.api_keys.revoke(issued.id)
        with pytest.raises(errors.UnauthenticatedError):
            second.usage.get()
    assert issued.id not in [key.id for key in client.api_keys.list()]


def test_a_sending_domain_is_registered_verified_listed_and_deleted(
    client: Client, resend: models.ProviderPublic
) -> None:
    name = f"{_key('mail')}.acme.example"
    domain = client.domains.create(domain=name, provider_account_id=resend.id)
    assert isinstance(domain, models.DomainPublic) and domain.records
    assert client.domains.get(domain.id).domain == name
    assert domain.id in [d.id for d in client.domains.list()]
    checked = client.domains.verify(domain.id)
    assert isinstance(checked, models.DomainPublic) and checked.id == domain.id
    client.domains.delete(domain.id)
    with pytest.raises(errors.ObjectNotFoundError):
        client.domains.get(domain.id)


def test_settings_are_changed_and_cleared(client: Client) -> None:
    assert isinstance(client.settings.get(), models.TenantSettingsPublic)
    changed = client.settings.update(contact_email="ops@acme.example")
    assert changed.contact_email == "ops@acme.example"
    assert client.settings.get().contact_email == "ops@acme.example"
    assert client.settings.update(contact_email=None).contact_email is None
    with pytest.raises(errors.ValidationError):
        client.settings.update(no_such_setting=1)


def test_usage_and_the_event_report_are_read(client: Client) -> None:
    usage = client.usage.get()
    assert usage.rate_limit is not None and usage.quotas
    report = client.reports.events(hours=2)
    assert isinstance(report, models.EventReport) and report.hours == 2
    with pytest.raises(errors.ValidationError):
        client.reports.events(hours=100_000)


def test_the_audit_log_pages_and_filters(client: Client) -> None:
    for name in ("audit-one", "audit-two"):
        client.api_keys.revoke(client.api_keys.create(name=name).id)
    page = client.audit_log.page(limit=1, action="api_key.issued")
    assert isinstance(page, models.PageAuditEventPublic) and len(page.data) == 1
    assert page.next_cursor
    issued = list(client.audit_log.list(limit=1, action="api_key.issued"))
    assert len(issued) >= 2 and {e.action for e in issued} == {"api_key.issued"}
    assert len({e.id for e in issued}) == len(issued)


def test_a_dead_letter_is_listed_read_redriven_and_purged(
    client: Client, server: Server, resend: models.ProviderPublic
) -> None:
    # One permanent refusal: the job is dead-lettered on its first attempt.
    fault = {"provider": "resend", "status": 400, "count": 1}
    httpx.post(server.sandbox_url + "/_sandbox/faults", json=fault, timeout=10).raise_for_status()
    queued = client.email.send(to="dead@example.com", from_=FROM, subject="s", text="t")
    assert _job_status(client, queued.id, "FAILED").status == "FAILED"
    [letter] = [d for d in client.dead_letters.list(limit=1) if d.job_id == queued.id]
    assert client.dead_letters.page(limit=1, provider="resend").data
    detail = client.dead_letters.get(letter.id)
    assert isinstance(detail, models.DeadLetterDetail)
    counted = client.dead_letters.redrive(ids=[letter.id], dry_run=True)
    assert isinstance(counted, models.Redriven) and counted.matched == 1
    redriven = client.dead_letters.redrive(ids=[letter.id])
    assert redriven.redriven == 1
    assert _job_status(client, queued.id, "COMPLETED").status == "COMPLETED"
    purged = client.dead_letters.purge(ids=[letter.id])
    assert isinstance(purged, models.Purged) and purged.matched == 1
    with pytest.raises(errors.UnprocessableError):
        client.dead_letters.purge()  # no selection: refused rather than purging all


async def test_the_async_client_has_the_same_new_resources(
    server: Server, resend: models.ProviderPublic
) -> None:
    async with AsyncClient(base_url=server.url, api_key=server.api_key) as sdk:
        person = _key("async-feed")
        await sdk.recipients.put(person, email="async@example.com")
        await sdk.in_app.send(recipient=person, body="Async item")
        assert [i.body async for i in sdk.feed.list(person)] == ["Async item"]
        assert (await sdk.feed.page(person)).unread_count == 1
        key = _key("async-layout")
        await sdk.layouts.create(key=key)
        draft = await sdk.layouts.create_version(key, html="{{ content }}")
        assert (await sdk.layouts.publish_version(key, draft.id)).state == "published"
        assert key in [layout.key async for layout in sdk.layouts.list()]
        issued = await sdk.api_keys.create(name="async-key")
        assert issued.id in [k.id for k in await sdk.api_keys.list()]
        await sdk.api_keys.revoke(issued.id)
        assert (await sdk.settings.get()).webhook_signature_format
        assert (await sdk.usage.get()).plan
        assert (await sdk.reports.events()).hours == 24
        assert [e async for e in sdk.audit_log.list(action="api_key.revoked")]
        assert isinstance(await sdk.dead_letters.page(), models.PageDeadLetterPublic)
        assert await sdk.webhooks.gone_endpoints() == []
        erased = await sdk.erasure.erase("nobody@example.com")
        assert erased.complete
        later = datetime.now(UTC) + timedelta(hours=3)
        queued = await sdk.email.send(
            to="a@example.com", from_=FROM, subject="s", text="t", send_at=later.isoformat()
        )
        moved = await sdk.jobs.reschedule(queued.id, send_at=later + timedelta(hours=1))
        assert moved.send_at is not None and moved.send_at > later
        with pytest.raises(errors.ObjectNotFoundError):
            await sdk.notifications.get(str(uuid.uuid4()))


def test_the_operator_manages_tenants_and_reads_every_queue_through_client_admin(
    server: Server, client: Client, resend: models.ProviderPublic
) -> None:
    with Client(base_url=server.url, api_key=server.admin_token) as operator:
        created = operator.admin.tenants.create(name=_key("acme"), plan="STARTUP")
        assert isinstance(created, models.TenantCreated) and created.api_key
        detail = operator.admin.tenants.get(created.id)
        assert isinstance(detail, models.TenantDetail) and detail.name == created.name
        renamed = operator.admin.tenants.update(created.id, name="Acme Renamed")
        assert renamed.name == "Acme Renamed"
        assert operator.admin.tenants.suspend(created.id).suspended is True
        with Client(base_url=server.url, api_key=created.api_key) as suspended:
            with pytest.raises(errors.ApiError) as refused:
                suspended.usage.get()
            assert refused.value.status in (401, 403)
        assert operator.admin.tenants.unsuspend(created.id).suspended is False
        assert created.id in [t.id for t in operator.admin.tenants.list(limit=1)]
        queued = client.email.send(to="op@example.com", from_=FROM, subject="s", text="t")
        found = list(operator.admin.jobs.list(limit=1, to="op@example.com"))
        assert queued.id in [job.id for job in found]
        assert operator.admin.jobs.page(limit=1).data[0].tenant_id
        assert isinstance(operator.admin.queues(), models.QueuesPublic)
        events = list(operator.admin.audit_log.list(tenant_id=created.id))
        assert {"tenant.created", "tenant.suspended"} <= {e.action for e in events}
        assert isinstance(operator.admin.audit_log.page(limit=1), models.PageAuditEventPublic)
        letters = list(operator.admin.dead_letters.list())
        assert isinstance(operator.admin.dead_letters.page(), models.PageDeadLetterPublic)
        counted = operator.admin.dead_letters.redrive(all=True, dry_run=True)
        assert counted.matched == len(letters) and counted.redriven == 0
        assert operator.admin.dead_letters.purge(ids=[str(uuid.uuid4())]).purged == 0
        with pytest.raises(errors.ObjectNotFoundError):
            operator.admin.dead_letters.get(str(uuid.uuid4()))
    with pytest.raises(errors.ApiError) as tenant_key:
        client.admin.queues()
    assert tenant_key.value.status in (401, 403)


async def test_the_async_client_has_client_admin_too(server: Server) -> None:
    async with AsyncClient(base_url=server.url, api_key=server.admin_token) as operator:
        created = await operator.admin.tenants.create(name=_key("async-acme"))
        assert (await operator.admin.tenants.get(created.id)).id == created.id
        assert created.id in [t.id async for t in operator.admin.tenants.list()]
        assert isinstance(await operator.admin.queues(), models.QueuesPublic)
        assert [e async for e in operator.admin.audit_log.list(tenant_id=created.id)]


@pytest.mark.parametrize("hostile", ["../api-keys", "x/../../api-keys", "a?limit=1", "%2e%2e"])
def test_an_id_never_leaves_its_path_segment(client: Client, hostile: str) -> None:
    """An id with ``/``, ``..``, ``?`` or an escape reaches its own route as one segment
    and is not found there: it never reads another route or adds a query."""
    for call in (client.layouts.get, client.domains.get, client.notifications.get):
        with pytest.raises(errors.NotFoundError):
            call(hostile)
    with pytest.raises(errors.NotFoundError):
        client.templates.get_version(hostile, hostile)
