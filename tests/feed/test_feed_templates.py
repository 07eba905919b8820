"""In-app sends with a template, on SQLite and PostgreSQL: a version's ``in_app`` part
(``title``, ``body``, ``url``) renders the item, the job records the template, markup
in the data stays text, a rendered URL that is not http(s) is refused, and a body that
gives both text and a template is refused."""

from __future__ import annotations

from tests.conftest import TenantClient, job
from tests.e2e.test_templates import make_template, publish
from tests.feed_helpers import put_recipient, send_item

IN_APP = {
    "title": "Hello {{ name }}",
    "body": "{{ count }} new comments",
    "url": "{{ link }}",
}


async def test_a_template_with_an_in_app_part_renders_the_item(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-1")
    await make_template(tenant, "comments")
    version = await publish(tenant, "comments", in_app=IN_APP)
    assert version["in_app"] == IN_APP
    data = {"name": "<b>Ann</b>", "count": 3, "link": "https://app.example/c"}
    response = await tenant.post(
        "/v1/notifications/in-app",
        json={"recipient": "user-1", "template": "comments", "data": data},
    )
    assert response.status_code == 202, response.text
    shown = await job(tenant, response.json()["id"])
    assert shown["status"] == "COMPLETED"
    [item] = (await tenant.get("/v1/recipients/user-1/feed")).json()["data"]
    assert (item["title"], item["body"], item["url"]) == (
        "Hello <b>Ann</b>",
        "3 new comments",
        "https://app.example/c",
    )
    assert item["data"] == data


async def test_a_rendered_url_that_is_not_http_is_refused(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-1")
    await make_template(tenant, "comments")
    await publish(tenant, "comments", in_app=IN_APP)
    for link in ("javascript:alert(1)", "data:text/html,x"):
        data = {"name": "A", "count": 1, "link": link}
        response = await tenant.post(
            "/v1/notifications/in-app",
            json={"recipient": "user-1", "template": "comments", "data": data},
        )
        assert response.status_code == 422, response.text
    assert (await tenant.get("/v1/recipients/user-1/feed")).json()["data"] == []


async def test_text_and_a_template_together_or_neither_are_refused(tenant: TenantClient) -> None:
    await put_recipient(tenant, "user-1")
    both = await send_item(tenant, "user-1", template="comments")
    assert both.status_code == 422
    neither = await tenant.post("/v1/notifications/in-app", json={"recipient": "user-1"})
    assert neither.status_code == 422
    no_part = await make_template(tenant, "sms-only")
    await publish(tenant, no_part["key"], sms={"body": "hi"})
    missing = await tenant.post(
        "/v1/notifications/in-app", json={"recipient": "user-1", "template": "sms-only"}
    )
    assert missing.status_code == 422, missing.text
