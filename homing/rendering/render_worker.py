"""The body of one render worker process: set its memory limit, then answer render
requests read from its pipe, one at a time, until the pipe closes.

A request is ``(version_id, parts, schema, data, channels, limits, layout)``; the answer is
``("ok", rendered)`` or ``("error", message, details)``. Compiled templates stay cached
by version id, so a version renders without being parsed again."""

from __future__ import annotations

import resource
import sys
from multiprocessing.connection import Connection
from typing import Any

from homing.rendering.kernel import Limits, Renderer, TemplateError


def serve(conn: Connection, memory_bytes: int) -> None:
    if memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    sys.setrecursionlimit(400)
    renderer = Renderer()
    conn.send(("ready",))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        version_id, parts, schema, data, channels, limits, layout = request
        answer: tuple[Any, ...]
        try:
            answer = (
                "ok",
                renderer.render(version_id, parts, schema, data, channels, Limits(*limits), layout),
            )
        except TemplateError as exc:
            answer = ("error", exc.message, exc.details)
        except MemoryError:
            answer = ("error", "the template needs too much memory", {})
        except RecursionError:
            answer = ("error", "the template recurses too deeply", {})
        try:
            conn.send(answer)
        except MemoryError:
            conn.send(("error", "the rendered parts are too large", {}))
        except (EOFError, OSError):
            return
