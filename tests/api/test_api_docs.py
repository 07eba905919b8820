"""/docs and /redoc name only Homing's own assets (no CDN, no font service), and the
assets are served with an ETag that revalidates (issue #29: "/docs works offline")."""

from __future__ import annotations

import re

import httpx
import pytest

ASSETS = [
    ("/docs/assets/swagger-ui-bundle.js", "text/javascript"),
    ("/docs/assets/swagger-ui.css", "text/css"),
    ("/docs/assets/redoc.standalone.js", "text/javascript"),
    ("/docs/assets/favicon.png", "image/png"),
]


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
async def test_the_reference_pages_name_only_homings_own_assets(
    api: httpx.AsyncClient, path: str
) -> None:
    page = await api.get(path)
    assert page.status_code == 200
    named = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", page.text)
    assert named, page.text
    assert all(url.startswith(("/docs/assets/", "/openapi.json")) for url in named), named
    assert "jsdelivr" not in page.text and "googleapis" not in page.text
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "unsafe-inline" not in csp.split("script-src")[1][:40]
    nonce = re.search(r"'nonce-([^']+)'", csp)
    assert nonce, csp
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", page.text)
    assert all(f'nonce="{nonce.group(1)}"' in attrs for attrs in inline), inline
    assert (await api.get(path)).headers["content-security-policy"] != csp, "a nonce per page"


@pytest.mark.parametrize(("path", "media"), ASSETS)
async def test_each_asset_is_served_with_an_etag_that_revalidates(
    api: httpx.AsyncClient, path: str, media: str
) -> None:
    first = await api.get(path)
    assert first.status_code == 200 and len(first.content) > 100
    assert first.headers["content-type"].startswith(media)
    assert first.headers["x-content-type-options"] == "nosniff"
    again = await api.get(path, headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""


async def test_no_other_name_under_the_assets_path_is_served(api: httpx.AsyncClient) -> None:
    for path in ("/docs/assets/../../etc/passwd", "/docs/assets/index.html", "/docs/assets/"):
        assert (await api.get(path)).status_code == 404
