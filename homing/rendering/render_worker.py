"""The body of one render worker process: set its memory limit, then answer requests
read from its pipe, one at a time, until the pipe closes.

A request is ``(kind, args)``: ``("render", (version_id, parts, schema, data, channels,
limits, layout))`` renders a version; ``("version", (parts, variables, limits))`` and
``("layout", (html, max_chars))`` check content being written (compiling it and checking
its schema can take as long as a render, so it runs here, under the same budget, never
on the API's event loop). The answer is ``("ok", result)`` or ``("error", message,
details)``. Compiled templates stay cached by version id, so a version renders without
being parsed again."""

from __future__ import annotations

import resource
import sys
from multiprocessing.connection import Connection
from typing import Any

from homing.rendering.kernel import Limits, Renderer, TemplateError, check_layout, check_version


def serve(conn: Connection, memory_bytes: int) -> None:
    if memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    sys.setrecursionlimit(400)
    renderer = Renderer()
    conn.send(("ready",))
    while True:
        try:
            kind, args = conn.recv()
        except (EOFError, OSError):
            return
        answer: tuple[Any, ...]
        try:
            answer = ("ok", _answer(renderer, kind, args))
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


def _answer(renderer: Renderer, kind: str, args: tuple[Any, ...]) -> Any:
    if kind == "version":
        parts, variables, limits = args
        check_version(parts, variables, Limits(*limits))
        return None
    if kind == "layout":
        html, max_chars = args
        check_layout(html, max_chars)
        return None
    version_id, parts, schema, data, channels, limits, layout = args
    return renderer.render(version_id, parts, schema, data, channels, Limits(*limits), layout)
