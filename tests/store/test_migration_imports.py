"""Migrations never import application code that may change: a revision must build the
same schema whatever ``homing.store`` becomes. They may import ``homing.migrations.*``
(the frozen column types), SQLAlchemy, Alembic and the standard library."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import sqlalchemy as sa
from alembic.autogenerate import render_python_code
from alembic.operations import ops

import homing.migrations
from homing.store.migrate import render_item
from homing.store.tables import columns

MIGRATIONS = Path(homing.migrations.__file__).parent
ALLOWED = "homing.migrations"


def _imported_modules(source: str) -> list[str]:
    modules: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # A relative import reaches whatever sits beside the file: refuse it too.
            modules.append("." * node.level + (node.module or ""))
    return modules


def _refused(module: str) -> bool:
    if module.startswith("."):
        return True
    if module == "homing" or module.startswith("homing."):
        return not (module == ALLOWED or module.startswith(ALLOWED + "."))
    return False


def _checked_files() -> list[Path]:
    return [*sorted((MIGRATIONS / "versions").glob("*.py")), MIGRATIONS / "types.py"]


def test_revisions_import_nothing_of_homing_but_the_migrations_package() -> None:
    files = _checked_files()
    assert len(files) >= 10  # every revision, __init__ and types.py
    refused = {
        f"{path.name}: {module}"
        for path in files
        for module in _imported_modules(path.read_text())
        if _refused(module)
    }
    assert refused == set()


def test_the_check_refuses_what_it_should() -> None:
    source = (
        "from homing.store.tables.core import UTCDateTime\n"
        "import homing.models\n"
        "from homing import store\n"
        "from . import helpers\n"
        "from homing.migrations.types import UTCDateTime\n"
        "import sqlalchemy as sa\n"
    )
    modules = [m for m in _imported_modules(source) if _refused(m)]
    assert modules == ["homing.store.tables.core", "homing.models", "homing", "."]


def test_autogenerate_writes_the_frozen_type_not_the_application_one() -> None:
    upgrade = ops.UpgradeOps(
        ops=[ops.CreateTableOp("t", [sa.Column("at", columns.UTCDateTime, nullable=False)])]
    )
    code = render_python_code(upgrade, render_item=render_item)
    assert "sa.Column('at', UTCDateTime(), nullable=False)" in code
    assert "homing.store" not in code
    # ... and the revision file gets the import that goes with it.
    context = SimpleNamespace(imports=set())
    assert render_item("type", columns.UTCDateTime(), context) == "UTCDateTime()"
    assert _imported_modules("\n".join(context.imports)) == ["homing.migrations.types"]
