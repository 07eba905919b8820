"""Posted forms, read within bounds before anything looks at them.

A console form is ``application/x-www-form-urlencoded``, at most 16 KiB, of at most 50
fields; each field is read with its own length bound (``Form.get``), and a longer value
is refused, not cut. Parsing is the standard library's, linear in the body.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request

from homing.errors import InvalidRequest, PayloadTooLarge

MAX_FORM_BYTES = 16 * 1024
MAX_FIELDS = 50
FORM_TYPE = "application/x-www-form-urlencoded"


class Form:
    """The fields of one posted form (the first value of each name)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._fields: dict[str, str] = {}
        for name, value in pairs:
            self._fields.setdefault(name, value)

    def __repr__(self) -> str:
        return f"Form(fields={sorted(self._fields)})"

    def get(self, name: str, max_length: int, default: str = "") -> str:
        """The field ``name`` (``default`` when absent); InvalidRequest when longer
        than ``max_length``."""
        value = self._fields.get(name, default)
        if len(value) > max_length:
            raise InvalidRequest(f"{name}: at most {max_length} characters, please.")
        return value

    def has(self, name: str) -> bool:
        return name in self._fields

    def names(self) -> frozenset[str]:
        """The names of the form's fields."""
        return frozenset(self._fields)


async def read_body(request: Request, max_bytes: int = MAX_FORM_BYTES) -> bytes:
    """The request's body; PayloadTooLarge past ``max_bytes`` (declared or read),
    before more than that is held."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLarge(f"A form of at most {max_bytes} bytes, please.")
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > max_bytes:
            raise PayloadTooLarge(f"A form of at most {max_bytes} bytes, please.")
    return bytes(body)


async def read_form(
    request: Request, max_bytes: int = MAX_FORM_BYTES, max_fields: int = MAX_FIELDS
) -> Form:
    """The request's form; PayloadTooLarge over 16 KiB (``max_bytes``), InvalidRequest
    when it is no urlencoded form or has more than ``max_fields`` fields."""
    kind = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind != FORM_TYPE:
        raise InvalidRequest("Send the form as the page does (urlencoded).")
    body = await read_body(request, max_bytes)
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=max_fields)
    except (UnicodeDecodeError, ValueError):
        raise InvalidRequest("That form was not understood.") from None
    return Form(pairs)
