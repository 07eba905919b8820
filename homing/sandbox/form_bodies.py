"""Form bodies as the vendors read them: ``application/x-www-form-urlencoded`` and
``multipart/form-data``, their fields in order (Mailgun's sends, Telegram's methods)."""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from typing import Final
from urllib.parse import parse_qsl

from starlette.requests import Request

Form = list[tuple[str, str]]
URLENCODED: Final = "application/x-www-form-urlencoded"
MULTIPART: Final = "multipart/form-data"


def is_form(request: Request) -> bool:
    """Whether the request's body is one of the two form encodings."""
    return request.headers.get("content-type", "").startswith((URLENCODED, MULTIPART))


async def read_form(request: Request) -> Form:
    """The request's form fields in order, from an urlencoded or multipart body; none
    for any other body. File parts are skipped: no sandbox contract takes a file."""
    content_type = request.headers.get("content-type", "")
    body = await request.body()
    if content_type.startswith(URLENCODED):
        return parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
    if content_type.startswith(MULTIPART):
        return _multipart(body, content_type)
    return []


def _multipart(body: bytes, content_type: str) -> Form:
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
    message = BytesParser(policy=policy.default).parsebytes(head + body)
    fields: Form = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str) or part.get_filename():
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            fields.append((name, payload.decode(part.get_content_charset() or "utf-8", "replace")))
    return fields
