"""The project speaks of itself alone: no shipped file names a path outside the
repository (a file of the machine it was written on, a sibling checkout). The
patterns are spelled so this file does not hold what they find."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What ships or runs: the package, both SDKs, the docs, the scripts and the deploy files.
SCANNED = ("homing", "clients", "docs", "scripts", "bench", "deploy", ".ci", "requirements")
SKIPPED = {"node_modules", "dist", "__pycache__", ".mypy_cache", ".ruff_cache"}
# An absolute path under a home or a work tree, or a sibling "shared" directory; a URL's
# path ("example.com/home/") follows a word character and is not one.
OUTSIDE = re.compile(r"(?<![\w.-])/(?:work|root|home|Users)/|\.\./shared\b")


def _files() -> list[Path]:
    found = [p for p in ROOT.iterdir() if p.is_file() and not p.name.startswith(".git")]
    for top in SCANNED:
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and not SKIPPED & set(path.relative_to(ROOT).parts):
                found.append(path)
    return found


def test_the_pattern_finds_what_it_is_for() -> None:
    # Joined here, so the test's own text holds none of them.
    for parts in (
        ("(", "work", "shared", "PROVIDERS.md)"),
        ("..", "shared", "x"),
        ("", "root", ""),
    ):
        text = "/".join(parts)
        assert OUTSIDE.search(text), text
    for text in ("https://example.com/home/", "/var/lib/homing", "./scripts/test"):
        assert not OUTSIDE.search(text), text


def test_no_file_names_a_path_outside_the_repository() -> None:
    files = [*_files(), Path(__file__)]
    assert len(files) > 100  # the walk really saw the tree
    named = []
    for path in files:
        data = path.read_bytes()
        if b"\0" in data:
            continue  # an image or other binary: no text names anything
        text = data.decode("utf-8", "replace")
        named += [f"{path.relative_to(ROOT)}: {m.group()}" for m in OUTSIDE.finditer(text)]
    assert named == []
