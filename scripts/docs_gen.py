"""Write docs/api.md, the API reference, and docs/openapi.json from the app's OpenAPI document.

    .venv/bin/python scripts/docs_gen.py           # rewrite docs/api.md, docs/openapi.json
    .venv/bin/python scripts/docs_gen.py --check   # exit 1 when either is stale

docs/openapi.json is the checked-in document the SDKs are generated from
(clients/python/generate.py); ``tests/unit/test_openapi.py`` fails when the app serves
another one.

The document is the one ``/openapi.json`` serves: the app is built on a throwaway SQLite
database, asked for ``app.openapi()`` and closed. Nothing here is imported by ``homing``
and nothing of it is served; ``tests/unit/test_docs.py`` fails when the page is stale.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "api.md"
OPENAPI = ROOT / "docs" / "openapi.json"
METHODS = ("get", "post", "put", "patch", "delete")
HEADER = """# API reference

Generated from the OpenAPI document that `GET /openapi.json` serves (interactive at
`/docs`, Swagger UI, and `/redoc` on a running Homing, their assets served by Homing
itself so both work offline) by `scripts/docs_gen.py`; do not edit it by hand. What each
route does, and why, is told on the topic pages: [Sending](sending.md),
[Channels and providers](channels.md), [Webhooks](webhooks.md),
[Inbound events](inbound.md), [Operations](operations.md). Errors have one shape,
`{"error": {"code", "message", "details"}}` (`ErrorResponse`), and lists one page shape,
`{"data": […], "next_cursor"}`.

Each route lists only the errors it can answer: per status, the `code` values it may
carry (in the document, the response's `x-error-codes`). Those it has by what it is
are derived from the route (`homing/api/route_errors.py`): every route may answer 500
and 503 `unavailable`; the API's paths 400 `host_not_allowed`; a route taking an API
key 401 and 403 `forbidden`/`tenant_suspended`; the sending routes 429 `rate_limited`;
a route with parameters 422 `validation_error`; one with a body 400
`malformed_request` and 413; one with a path id 404. Its own domain refusals (409
`conflict`, 422 `no_provider`, …) are declared next to it. A method the path does not
have is answered 405 `method_not_allowed` (`components.responses` in the document).
"""


async def openapi_document() -> dict[str, Any]:
    """The app's OpenAPI document, built against an empty SQLite database."""
    from pydantic import SecretStr

    from homing.api.app import create_app
    from homing.crypto import generate_master_key
    from homing.services import build
    from homing.settings import Settings

    with tempfile.TemporaryDirectory(prefix="homing-docs-") as folder:
        settings = Settings().changed(
            data_dir=Path(folder),
            database_url=f"sqlite+aiosqlite:///{Path(folder) / 'homing.db'}",
            secret_key=SecretStr(generate_master_key()),
        )
        services = await build(settings)
        try:
            return create_app(services).openapi()
        finally:
            await services.aclose()


def _ref_name(schema: dict[str, Any]) -> str:
    """A schema as a short type: a component's name, ``list[X]``, ``A | B``, or its type."""
    if "$ref" in schema:
        return "`" + str(schema["$ref"]).rsplit("/", 1)[-1] + "`"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " \\| ".join(_ref_name(option) for option in schema[key])
    if schema.get("type") == "array":
        return f"list[{_ref_name(schema.get('items', {}))}]"
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    return str(schema.get("type", "any"))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _operation(method: str, path: str, operation: dict[str, Any]) -> Iterator[str]:
    yield f"### `{method.upper()} {path}`\n"
    summary = operation.get("description") or operation.get("summary", "")
    if summary:
        yield _cell(summary) + "\n"
    parameters = operation.get("parameters", [])
    if parameters:
        yield "| parameter | in | type | required |"
        yield "| --- | --- | --- | --- |"
        for parameter in parameters:
            kind = _ref_name(parameter.get("schema", {}))
            required = "yes" if parameter.get("required") else "no"
            yield f"| `{parameter['name']}` | {parameter['in']} | {kind} | {required} |"
        yield ""
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        yield f"Body ({media}): {_ref_name(content.get('schema', {}))}\n"
    responses = []
    for status, response in operation.get("responses", {}).items():
        schemas = [c.get("schema", {}) for c in response.get("content", {}).values()]
        shape = f" {_ref_name(schemas[0])}" if schemas and schemas[0] else ""
        codes = response.get("x-error-codes")
        if codes:
            shape = " (" + ", ".join(f"`{code}`" for code in codes) + ")"
        responses.append(f"{status}{shape}")
    if responses:
        yield "Responses: " + ", ".join(responses) + "\n"


def _schema(name: str, schema: dict[str, Any]) -> Iterator[str]:
    yield f"### `{name}`\n"
    if schema.get("description"):
        yield _cell(schema["description"]) + "\n"
    properties = schema.get("properties", {})
    if not properties:
        yield f"Type: {_ref_name(schema)}\n"
        return
    required = set(schema.get("required", []))
    yield "| field | type | required |"
    yield "| --- | --- | --- |"
    for field, definition in properties.items():
        yield f"| `{field}` | {_ref_name(definition)} | {'yes' if field in required else 'no'} |"
    yield ""


# Routes that answer HTML with no API key, so not in the OpenAPI document (which the
# SDKs are generated from): a recipient's links (docs/recipients.md, "Links").
_PAGES = (
    (
        "GET /u/{token}",
        "200: a page with an *Unsubscribe* button; changes nothing. 404 page for a token"
        " that does not open; 429 past the misses window",
    ),
    (
        "POST /u/{token}",
        "body `List-Unsubscribe=One-Click` (urlencoded or multipart, at most 4 KiB): 200,"
        " the link's recipient or address opted out of the category (RFC 8058); 200 again"
        " for a replay. 422 for another body, 413 past the bound, 404 page for a token"
        " that does not open",
    ),
    (
        "GET /p/{token}",
        "200: the preference page (the tenant's categories, a checkbox per channel). 404"
        " page for a token that does not open",
    ),
    (
        "POST /p/{token}",
        "the page's form (urlencoded: `csrf` and a `<category>.<channel>` field per ticked"
        " box; at most 32 KiB, 400 fields): 200, the choices stored. 403 from another site"
        " or without the form's token",
    ),
)
PUBLIC_PAGES = (
    "## Public pages (HTML, no API key)\n\n"
    "A recipient's links, opened by a browser or posted by a mail client; they are not in\n"
    'the OpenAPI document. See [Recipients, "Links"](recipients.md#links).\n\n'
    "| route | answer |\n| --- | --- |\n"
    + "".join(f"| `{route}` | {answer} |\n" for route, answer in _PAGES)
)


def render(document: dict[str, Any]) -> str:
    """The page: every route of the document, the public pages, then every schema the
    document names."""
    lines = [HEADER, "## Routes\n"]
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                lines.extend(_operation(method, path, item[method]))
    lines.append(PUBLIC_PAGES)
    lines.append("## Schemas\n")
    for name, schema in sorted(document.get("components", {}).get("schemas", {}).items()):
        lines.extend(_schema(name, schema))
    return "\n".join(lines).rstrip("\n") + "\n"


def openapi_text(document: dict[str, Any]) -> str:
    """docs/openapi.json: the document as served, indented so that its diffs read."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when an output is stale")
    args = parser.parse_args(argv)
    document = asyncio.run(openapi_document())
    outputs = {PAGE: render(document), OPENAPI: openapi_text(document)}
    if args.check:
        stale = [p for p, text in outputs.items() if not p.exists() or p.read_text() != text]
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale: run scripts/docs_gen.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
