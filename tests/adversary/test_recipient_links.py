"""A stranger, a link scanner and a hostile tenant against the recipient links
(``/u/<token>``, ``/p/<token>``): forged, truncated, oversized, bit-flipped and
replayed tokens, another tenant's recipient inside a validly made token, one
purpose's token used for the other, a huge or many-fielded form, a form from another
site, and a header injection through the unsubscribe mailbox. Each is refused before
anything changes; no token carries personal data (decoded here)."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import httpx
import pytest

from homing.managers.optout_links import MAX_TOKEN, LinkClaim, LinkPurpose
from homing.models import Plan
from homing.services import Services
from homing.settings import Settings
from tests.conftest import TenantClient, make_tenant
from tests.fixtures import settings_for

PUBLIC = "http://homing.test"
ONE_CLICK = {"List-Unsubscribe": "One-Click"}
MISSES = 5
U, P = LinkPurpose.UNSUBSCRIBE, LinkPurpose.PREFERENCES


@pytest.fixture
def settings(database_url: str, tmp_path: Path, secret_key: str) -> Settings:
    return settings_for(
        database_url,
        tmp_path,
        secret_key,
        public_url=PUBLIC,
        recipient_link_misses_per_minute=MISSES,
    )


async def person(services: Services, tenant: TenantClient, email: str) -> str:
    """A marketing category ``digest`` (on by default) and recipient ``user-1``; its id."""
    body = {"name": "Digest", "kind": "marketing", "default": {"email": True}}
    assert (await tenant.put("/v1/categories/digest", json=body)).status_code in (200, 201)
    put = await tenant.put("/v1/recipients/user-1", json={"email": email})
    assert put.status_code in (200, 201), put.text
    return (await services.recipients.get(tenant.tenant_id, "user-1")).id


async def wants_digest(tenant: TenantClient) -> bool:
    response = await tenant.get("/v1/recipients/user-1/preferences")
    allowed: bool = response.json()["categories"]["digest"]["email"]
    return allowed


def link(services: Services, purpose: LinkPurpose, claim: LinkClaim) -> str:
    return f"/{purpose.value}/{services.optouts.links.issue(purpose, claim)}"


def raw(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


async def test_forged_truncated_oversized_and_flipped_tokens_are_one_plain_404(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    recipient_id = await person(services, tenant, "ada@example.com")
    claim = LinkClaim(tenant.tenant_id, "email", "digest", recipient_id)
    token = services.optouts.links.issue(U, claim)
    flipped = bytearray(raw(token))
    flipped[-1] ^= 0x01
    bad = [
        b64(b"\x01" + bytes(60)),  # forged: the right shape, no key
        token[:-3],  # truncated
        token[:20],
        token + "A" * (MAX_TOKEN - len(token) + 1),  # oversized
        b64(bytes(flipped)),
    ]
    for candidate in bad[:MISSES]:
        for answer in (
            await api.get(f"/u/{candidate}"),
            await api.post(f"/u/{candidate}", data=ONE_CLICK),
        ):
            assert answer.status_code in (404, 429), answer.text
            assert candidate not in answer.text
    assert await wants_digest(tenant)


def test_every_single_bit_flip_of_a_token_is_refused(services: Services) -> None:
    links = services.optouts.links
    token = links.issue(U, LinkClaim("t-1", "email", "digest", "r-1"))
    data = raw(token)
    for at in range(len(data)):
        for bit in range(8):
            changed = bytearray(data)
            changed[at] ^= 1 << bit
            assert links.read(U, b64(bytes(changed))) is None
    assert links.read(U, token) == LinkClaim("t-1", "email", "digest", "r-1")


def test_no_token_carries_personal_data_in_clear(services: Services) -> None:
    links = services.optouts.links
    tenant_id, recipient_id = str(uuid.uuid4()), str(uuid.uuid4())
    ref = links.address_ref(tenant_id, "email", "ada@example.com")
    tokens = [
        links.issue(U, LinkClaim(tenant_id, "email", "secret-health-list", recipient_id)),
        links.issue(U, LinkClaim(tenant_id, "email", "secret-health-list", address_ref=ref)),
        links.issue(P, LinkClaim(tenant_id, "email", "", recipient_id)),
    ]
    for token in tokens:
        assert len(token) <= MAX_TOKEN
        decoded = raw(token)
        for secret in ("ada", "example.com", "secret-health", recipient_id, tenant_id, ref):
            assert secret.encode() not in decoded and secret not in token
        for identity in (recipient_id, tenant_id):
            assert uuid.UUID(identity).bytes not in decoded
        assert bytes.fromhex(ref) not in decoded
    # The same claim twice is two different tokens: nothing to match tokens by.
    again = links.issue(P, LinkClaim(tenant_id, "email", "", recipient_id))
    assert again != tokens[2]


async def test_one_purposes_token_does_not_open_the_other(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    recipient_id = await person(services, tenant, "ada@example.com")
    claim = LinkClaim(tenant.tenant_id, "email", "digest", recipient_id)
    unsubscribe, preferences = link(services, U, claim), link(services, P, claim)
    assert (await api.get("/p/" + unsubscribe[3:])).status_code == 404
    assert (await api.post("/u/" + preferences[3:], data=ONE_CLICK)).status_code == 404
    assert (await api.get(unsubscribe)).status_code == 200
    assert (await api.get(preferences)).status_code == 200
    assert await wants_digest(tenant)


async def test_a_token_naming_another_tenants_recipient_changes_nothing(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    other = await make_tenant(services, api, "other", Plan.STARTUP)
    theirs = await person(services, other, "grace@other.example")
    await person(services, tenant, "ada@example.com")
    # Made with the deployment's key (as no stranger could): this tenant, their recipient.
    crossed = LinkClaim(tenant.tenant_id, "email", "digest", theirs)
    for purpose in (U, P):
        answer = await api.post(link(services, purpose, crossed), data=ONE_CLICK)
        assert answer.status_code == 404, answer.text
        assert "grace" not in answer.text
    assert await wants_digest(other) and await wants_digest(tenant)


async def test_a_replayed_unsubscribe_is_200_with_one_change_and_one_event(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    recipient_id = await person(services, tenant, "ada@example.com")
    path = link(services, U, LinkClaim(tenant.tenant_id, "email", "digest", recipient_id))
    for _ in range(5):
        answer = await api.post(path, data=ONE_CLICK)
        assert answer.status_code == 200, answer.text
        assert "set-cookie" not in answer.headers
    log = await tenant.get("/v1/audit-log", params={"action": "recipient.unsubscribed"})
    assert len(log.json()["data"]) == 1
    assert not await wants_digest(tenant)


async def test_a_deleted_recipients_link_is_a_404(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    recipient_id = await person(services, tenant, "ada@example.com")
    path = link(services, P, LinkClaim(tenant.tenant_id, "email", "", recipient_id))
    assert (await tenant.delete("/v1/recipients/user-1")).status_code == 200
    assert (await api.get(path)).status_code == 404


async def test_misses_are_throttled_per_client_and_working_links_still_work(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    recipient_id = await person(services, tenant, "ada@example.com")
    statuses = [(await api.get(f"/u/{b64(bytes(40))}{i}")).status_code for i in range(MISSES + 2)]
    assert statuses[:MISSES] == [404] * MISSES and statuses[-1] == 429
    path = link(services, U, LinkClaim(tenant.tenant_id, "email", "digest", recipient_id))
    assert (await api.post(path, data=ONE_CLICK)).status_code == 200


async def test_huge_or_hostile_forms_are_refused_before_anything_changes(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    recipient_id = await person(services, tenant, "ada@example.com")
    claim = LinkClaim(tenant.tenant_id, "email", "digest", recipient_id)
    unsubscribe, preferences = link(services, U, claim), link(services, P, claim)
    huge = "List-Unsubscribe=One-Click&" + "x" * 2_000_000
    form = {"content-type": "application/x-www-form-urlencoded"}
    assert (await api.post(unsubscribe, content=huge, headers=form)).status_code == 413
    assert (await api.post(preferences, content=huge, headers=form)).status_code == 413
    many = "&".join(f"f{i}=on" for i in range(2000))
    assert (await api.post(preferences, content=many, headers=form)).status_code == 422
    assert (await api.post(unsubscribe, data={"List-Unsubscribe": "Maybe"})).status_code == 422
    assert (await api.post(unsubscribe, json={"List-Unsubscribe": "One-Click"})).status_code == 422
    csrf = services.optouts.links.form_token(preferences[3:])
    other_site = {"origin": "https://evil.example"}
    answer = await api.post(preferences, data={"csrf": csrf}, headers=other_site)
    assert answer.status_code == 403
    assert (await api.post(preferences, data={"csrf": "0" * 64})).status_code == 403
    assert await wants_digest(tenant)


async def test_a_multipart_one_click_post_opts_out(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    recipient_id = await person(services, tenant, "ada@example.com")
    path = link(services, U, LinkClaim(tenant.tenant_id, "email", "digest", recipient_id))
    answer = await api.post(path, files={"List-Unsubscribe": (None, "One-Click")})
    assert answer.status_code == 200, answer.text
    assert not await wants_digest(tenant)


@pytest.mark.parametrize(
    "mailbox",
    [
        "unsub@acme.example\r\nBcc: all@victims.example",
        "unsub@acme.example>, <https://evil.example/",
        "Ünsub@acme.example",
        "unsub@acme.example?subject=x",
        "a" * 300 + "@acme.example",
    ],
)
async def test_a_hostile_unsubscribe_mailbox_is_422_and_not_stored(
    tenant: TenantClient, mailbox: str
) -> None:
    answer = await tenant.patch("/v1/settings", json={"unsubscribe_mailbox": mailbox})
    assert answer.status_code == 422, answer.text
    assert (await tenant.get("/v1/settings")).json()["unsubscribe_mailbox"] is None


async def test_a_link_under_a_host_homing_is_not_is_refused(
    services: Services, api: httpx.AsyncClient, tenant: TenantClient
) -> None:
    recipient_id = await person(services, tenant, "ada@example.com")
    path = link(services, U, LinkClaim(tenant.tenant_id, "email", "digest", recipient_id))
    forged = {"host": "evil.example"}
    assert (await api.post(path, data=ONE_CLICK, headers=forged)).status_code == 400
    assert await wants_digest(tenant)
