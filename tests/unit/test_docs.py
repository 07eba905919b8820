"""The documentation says each fact once and says it true: every setting of the Settings
model is on docs/settings.md with its default (and no other name is), every ``homing``
command of the argparse tree is on docs/cli.md (and no other is), docs/api.md is what
scripts/docs_gen.py makes of the OpenAPI document today, and the README stays a front
door whose links all lead somewhere."""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic.fields import FieldInfo

from homing.cli.parser import build_parser as _parser
from homing.settings import env_fields

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ROW = re.compile(r"^\| `(HOMING_[A-Z0-9_]+)` \| ([^|]*) \|", re.MULTILINE)


def _docs_gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_gen", ROOT / "scripts" / "docs_gen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _documented_settings() -> dict[str, str]:
    rows = ROW.findall((DOCS / "settings.md").read_text())
    names = [name for name, _ in rows]
    assert len(names) == len(set(names)), f"a setting has two rows: {names}"
    return {name: default.strip() for name, default in rows}


def _default_matches(cell: str, field: FieldInfo) -> bool:
    """``unset`` is None, ``empty`` the empty string, a code literal the value itself;
    any other text describes what an unset value means, so the default must be None."""
    default: Any = field.default
    literal = re.fullmatch(r"`([^`]*)`", cell)
    if cell == "unset":
        return default is None
    if cell == "empty":
        return default == ""
    if literal is None:
        return default is None
    text = literal.group(1)
    if isinstance(default, bool):
        return text == str(default).lower()
    if isinstance(default, int | float):
        return float(text) == float(default)
    if isinstance(default, Path):
        return Path(text) == default
    return text == str(default)


def test_every_setting_is_documented_with_its_default_and_nothing_else_is() -> None:
    documented = _documented_settings()
    fields = env_fields()
    assert sorted(set(fields) - set(documented)) == [], "settings missing from docs/settings.md"
    assert sorted(set(documented) - set(fields)) == [], "docs/settings.md names no such setting"
    wrong = {
        name: (cell, fields[name].default)
        for name, cell in documented.items()
        if not _default_matches(cell, fields[name])
    }
    assert wrong == {}, "docs/settings.md gives another default than homing/settings.py"


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> dict[tuple[str, ...], list[str]]:
    """Every leaf command of the tree, with its long options (hidden ones left out)."""
    found: dict[tuple[str, ...], list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(_commands(sub, (*path, name)))
    if not found and path:
        options = [
            option
            for action in parser._actions
            if action.help != argparse.SUPPRESS
            for option in action.option_strings
            if option.startswith("--") and option != "--help"
        ]
        found[path] = options
    return found


def _command_cells() -> list[str]:
    page = (DOCS / "cli.md").read_text()
    return re.findall(r"^\| (`homing [^|]*(?:\\\|[^|]*)*) \|", page, flags=re.MULTILINE)


def _documented_paths(cells: list[str]) -> set[tuple[str, ...]]:
    paths: set[tuple[str, ...]] = set()
    for cell in cells:
        for usage in re.findall(r"`homing ([^`]*)`", cell):
            words = re.findall(r"^[a-z][a-z-]*(?: [a-z][a-z\\|-]*)?", usage)[0].split()
            for second in words[1].split("\\|") if len(words) > 1 else [""]:
                paths.add((words[0], second) if second else (words[0],))
    return paths


def test_every_command_is_documented_with_its_options_and_nothing_else_is() -> None:
    commands = _commands(_parser())
    assert ("dlq", "redrive") in commands, "the walk found the nested commands"
    cells = _command_cells()
    documented = _documented_paths(cells)
    # A path like ("tenant", "ID") is a group word followed by an argument: keep real ones.
    groups = {path[0] for path in commands if len(path) > 1}
    documented = {p if p[0] in groups else p[:1] for p in documented}
    assert sorted(set(commands) - documented) == [], "commands missing from docs/cli.md"
    assert sorted(documented - set(commands)) == [], "docs/cli.md names no such command"
    missing = [
        f"homing {' '.join(path)} {option}"
        for path, options in commands.items()
        for option in options
        if not any(f"homing {path[0]}" in cell and option in cell for cell in cells)
    ]
    assert missing == [], "options missing from docs/cli.md"


async def test_the_api_reference_is_what_the_openapi_document_says_today() -> None:
    docs_gen = _docs_gen()
    document = await docs_gen.openapi_document()
    page = docs_gen.render(document)
    assert (DOCS / "api.md").read_text() == page, (
        "docs/api.md is stale: run .venv/bin/python scripts/docs_gen.py"
    )
    for path, item in document["paths"].items():
        for method in docs_gen.METHODS:
            if method in item:
                assert f"### `{method.upper()} {path}`" in page


def test_the_readme_is_a_front_door_whose_links_lead_somewhere() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if not t.startswith(("http://", "https://"))]
    assert "docs/settings.md" in local, "the README points at the documentation"
    assert [t for t in local if not (ROOT / t).exists()] == [], "README links to nothing"


def test_the_site_builds_strict_and_loads_nothing_from_elsewhere(tmp_path: Path) -> None:
    """A broken link or anchor fails the build; no page asks a browser for a font, a
    stylesheet or a script from another host (``theme.font: false``, no CDN)."""
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert built.returncode == 0, built.stderr
    pages = list(site.rglob("*.html"))
    assert len(pages) > 10
    remote = re.compile(r"<(?:link|script|img)[^>]+(?:href|src)=\"(?:https?:)?//", re.I)
    assert [p.name for p in pages if remote.search(p.read_text())] == []
