"""``homing --help``, a completion script and an argument error are answered before any
of Homing's services is imported: the command line (``homing.cli.parser``) loads no
store, database driver, web framework or provider (``homing.cli.commands`` does, once
the arguments are parsed)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("homing.services", "homing.store", "homing.api", "sqlalchemy", "fastapi", "httpx")


def _loaded_by(code: str) -> set[str]:
    shown = "import sys; print('\\n'.join(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}; {shown}"], capture_output=True, text=True, check=True
    )
    return set(done.stdout.split())


def _heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith(HEAVY)}


def test_parsing_the_command_line_imports_no_service() -> None:
    code = (
        "from homing.cli.parser import build_parser; "
        "build_parser().parse_args(['dlq', 'list', '--since', '2026-01-01T00:00:00Z'])"
    )
    assert _heavy(_loaded_by(code)) == set()


def test_a_completion_script_imports_no_service() -> None:
    code = "import contextlib, io; from homing.cli import main; " + (
        "f = io.StringIO(); cm = contextlib.redirect_stdout(f); cm.__enter__(); "
        "main(['completion', 'bash']); cm.__exit__(None, None, None)"
    )
    assert _heavy(_loaded_by(code)) == set()


def test_a_command_imports_what_it_runs() -> None:
    # The check sees an import: the module that runs commands loads the services.
    assert "homing.services" in _heavy(_loaded_by("import homing.cli.commands"))
