"""structlog JSON logs, with secrets redacted before anything is rendered.

Redaction works on two levels: keys whose name says "secret" (password, api_key,
token, authorization…) are replaced whole, and values that look like keys Homing or
a provider issues (``hk_…``, ``Bearer …``, ``whsec_…``, ``SG.…``, ``re_…``) are masked
wherever they appear in a string.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import structlog

from homing.vendors import VENDORS

_SECRET_KEYS = re.compile(
    r"pass(word)?|secret|token|api[_-]?key|authorization|credential|signature|cookie",
    re.IGNORECASE,
)
# Homing's own key prefixes, signing secrets, the billing keys, HTTP auth, and how each
# vendor's secrets begin (its descriptor's ``secret_shapes``: a key prefix, or the part
# of a URL after which the URL is the credential). No two alternatives begin alike.
_SECRET_VALUES = re.compile(
    "("
    + "|".join(
        [
            r"hk_(?:test_)?",
            r"whsec_",
            r"sk_(?:live|test)_",
            r"Bearer\s+",
            r"Basic\s+",
            *(shape for vendor in VENDORS.values() for shape in vendor.secret_shapes),
        ]
    )
    + r")[A-Za-z0-9._~+/=-]{6,}"
)


def job_context(
    job_id: str, tenant_id: str | None, pass_number: int | None
) -> AbstractContextManager[None]:
    """Bind ``job_id``, ``tenant_id`` and the pass's number to every log line written
    inside the ``with`` block, stdlib and structlog alike (contextvars: a delivery's task
    sees only its own job's). The pass's number is logged as ``attempt``, the field's
    public name (docs/settings.md, ``HOMING_LOG_LEVEL``)."""
    return _bound(job_id=job_id, tenant_id=tenant_id, attempt=pass_number)


def request_context(request_id: str) -> AbstractContextManager[None]:
    """Bind ``request_id`` to every log line written while one API request is served."""
    return _bound(request_id=request_id)


def current_request_id() -> str | None:
    """The id of the API request being served (``request_context``), if any."""
    value = structlog.contextvars.get_contextvars().get("request_id")
    return value if isinstance(value, str) else None


@contextmanager
def _bound(**fields: object) -> Iterator[None]:
    tokens = structlog.contextvars.bind_contextvars(**fields)
    try:
        yield
    finally:
        structlog.contextvars.reset_contextvars(**tokens)


def redact_text(text: str) -> str:
    return _SECRET_VALUES.sub(lambda m: f"{m.group(1)}[REDACTED]", text)


def _redact(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {
            k: "[REDACTED]" if _SECRET_KEYS.search(str(k)) else _redact(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact(v) for v in value]
    return value


def redact_processor(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: scrub every field of the event."""
    return {
        k: "[REDACTED]" if _SECRET_KEYS.search(k) else _redact(v) for k, v in event_dict.items()
    }


def configure_logging(level: str = "info", stream: Any = None) -> None:
    """Route stdlib and structlog logging to one JSON line per event on ``stream``."""
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            redact_processor,
            structlog.processors.JSONRenderer(),
        ],
    )
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level.upper())
    for noisy in ("uvicorn.access", "httpx", "httpcore", "aiosqlite", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
