"""What a command prints (docs/cli.md, "Output"): one JSON document for scripts, text
for people. ``--json`` asks for JSON; without it a terminal gets text and a pipe or a
file still gets JSON, as every data command printed before ``--json`` existed, so the
scripts that read them keep working. Progress goes to stderr either way."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import Any

# Commands that print no data: servers, and ``migrate`` (its result is its exit status
# and a line on stderr), and ``completion`` (a script).
NO_OUTPUT = frozenset({"run", "api", "worker", "sandbox", "completion", "migrate"})
JSON_HELP = "print JSON (the default when stdout is not a terminal)"


def add_json_flags(parser: argparse.ArgumentParser, skip: Iterable[str] = NO_OUTPUT) -> None:
    """Give ``--json`` to every leaf command of ``parser`` but those named in ``skip``."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        parser.add_argument("--json", action="store_true", help=JSON_HELP)
        return
    for group in groups:
        for name, child in group.choices.items():
            if name not in skip:
                add_json_flags(child, ())


def wants_json(args: argparse.Namespace) -> bool:
    """JSON when asked for, or when nobody reads stdout on a terminal."""
    return bool(getattr(args, "json", False)) or not sys.stdout.isatty()


def emit(args: argparse.Namespace, value: Any) -> int:
    """Print ``value`` (JSON-ready: dicts, lists, strings, numbers) for ``args``; 0."""
    print(json.dumps(value) if wants_json(args) else human(value), flush=True)
    return 0


def human(value: Any) -> str:
    """``value`` as text: a page as one block per item, a mapping as ``name: value``
    lines, nested values as compact JSON."""
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        blocks = [human(item) for item in value["data"]] or ["(none)"]
        if value.get("next_cursor"):
            blocks.append(f"more: --cursor {value['next_cursor']}")
        return "\n\n".join(blocks)
    if isinstance(value, dict):
        width = max((len(str(k)) for k in value), default=0)
        return "\n".join(f"{str(k) + ':':<{width + 1}} {_cell(v)}" for k, v in value.items())
    return _cell(value)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "))
