"""The Python SDK's templates, recipients and categories against a real ``homing run``:
each wrapper's call reaches its route and parses its answer; the async client the same."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from homing_client import AsyncClient, Client, errors, models

from tests.sdk.conftest import Server


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[Client]:
    with Client(base_url=server.url, api_key=server.api_key) as sdk:
        yield sdk


def _key(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_a_template_is_created_versioned_published_and_previewed(client: Client) -> None:
    key = _key("welcome")
    created = client.templates.create(key=key, name="Welcome")
    assert isinstance(created, models.TemplatePublic)
    assert (created.key, created.name) == (key, "Welcome")
    assert client.templates.get(key).id == created.id
    draft = client.templates.create_version(key, email={"subject": "Hi {{ name }}", "text": "x"})
    assert isinstance(draft, models.VersionPublic) and draft.state == "draft"
    edited = client.templates.update_version(
        key, draft.id, email={"subject": "Hello {{ name }}", "text": "Dear {{ name }}"}
    )
    assert edited.email is not None and edited.email["subject"] == "Hello {{ name }}"
    published = client.templates.publish_version(created.id, draft.id)
    assert published.state == "published"
    shown = client.templates.preview(key, data={"name": "Ada"})
    assert isinstance(shown, models.PreviewPublic)
    assert shown.email is not None and shown.email["subject"] == "Hello Ada"
    assert key in [t.key for t in client.templates.list(limit=1)]


def test_a_missing_template_raises_not_found(client: Client) -> None:
    with pytest.raises(errors.ObjectNotFoundError):
        client.templates.get(_key("absent"))


def test_a_recipient_is_put_read_listed_and_deleted_with_its_preferences(
    client: Client,
) -> None:
    category = _key("digest")
    put = client.categories.put(category, name="Digest", kind="marketing")
    assert isinstance(put, models.CategoryPublic) and put.kind == "marketing"
    assert client.categories.get(category).name == "Digest"
    assert category in [c.key for c in client.categories.list(limit=1)]
    person = _key("user")
    recipient = client.recipients.put(person, email="ada@example.com", locale="en")
    assert isinstance(recipient, models.RecipientPublic)
    assert client.recipients.get(person).email == "ada@example.com"
    assert person in [r.external_id for r in client.recipients.list(limit=1)]
    changed = client.recipients.update_preferences(person, categories={category: {"email": False}})
    assert isinstance(changed, models.Preferences)
    assert client.recipients.preferences(person).categories[category]["email"] is False
    token = client.recipients.feed_token(person, ttl_seconds=60)
    assert isinstance(token, models.FeedToken) and token.token
    # No HOMING_PUBLIC_URL on this server: the link cannot be made.
    with pytest.raises(errors.PublicUrlRequiredError):
        client.recipients.preference_link(person)
    client.recipients.delete(person)
    with pytest.raises(errors.ObjectNotFoundError):
        client.recipients.get(person)


async def test_the_async_client_has_the_same_resources(server: Server) -> None:
    async with AsyncClient(base_url=server.url, api_key=server.api_key) as sdk:
        key = _key("async")
        created = await sdk.templates.create(key=key)
        assert (await sdk.templates.get(key)).id == created.id
        version = await sdk.templates.create_version(key, sms={"body": "Code {{ code }}"})
        await sdk.templates.publish_version(key, version.id)
        shown = await sdk.templates.preview(key, data={"code": "42"})
        assert shown.sms is not None and shown.sms["body"] == "Code 42"
        assert key in [t.key async for t in sdk.templates.list()]
        category = _key("alerts")
        await sdk.categories.put(category, name="Alerts", kind="transactional")
        assert category in [c.key async for c in sdk.categories.list()]
        person = _key("async-user")
        await sdk.recipients.put(person, phone="+14155552671")
        assert (await sdk.recipients.get(person)).phone == "+14155552671"
        assert person in [r.external_id async for r in sdk.recipients.list()]
        await sdk.recipients.update_preferences(person, categories={category: {"sms": True}})
        choices = (await sdk.recipients.preferences(person)).categories[category]
        assert choices["sms"] is True
        assert (await sdk.recipients.feed_token(person)).token
        await sdk.recipients.delete(person)
        with pytest.raises(errors.ObjectNotFoundError):
            await sdk.recipients.get(person)
