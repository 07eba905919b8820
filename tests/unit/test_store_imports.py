"""Every SQL statement lives in ``homing/store/``, and the store imports nothing above it.

Read with ``ast`` (no module is imported), so a violation anywhere in a file counts,
also inside a function or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "homing"

# The kernel: modules every layer may import, which import no layer themselves.
STORE_MAY_IMPORT = frozenset(
    {
        "homing.addresses",
        "homing.channels",
        "homing.clock",
        "homing.crypto",
        # The domain's plain types, one module per resource (homing/domain/).
        "homing.domain",
        "homing.errors",
        "homing.models",
    }
)

# Packages that build or run SQL, or talk to a database driver directly.
# The store's table definitions count: a Table in hand is a statement waiting to be built.
SQL_PACKAGES = frozenset(
    {
        "sqlalchemy",
        "alembic",
        "asyncpg",
        "aiosqlite",
        "sqlite3",
        "psycopg",
        "homing.store.tables.core",
        "homing.store.tables.inbound",
        "homing.store.tables.audit",
        "homing.store.tables.console",
    }
)

# Where they may be imported: the store and the migrations.
SQL_HOMES = (PACKAGE / "store", PACKAGE / "migrations")


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    return _imports_in(path.read_text(), package)


def _imports_in(source: str, package: str) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source``, a module of ``package``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            yield node.lineno, name


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{line}"


def test_store_imports_only_the_store_and_kernel_modules() -> None:
    offending = [
        f"{_where(path, line)} imports {name}"
        for path in sorted((PACKAGE / "store").rglob("*.py"))
        for line, name in _imports(path)
        if _within(name, "homing")
        and not _within(name, "homing.store")
        and not any(_within(name, kernel) for kernel in STORE_MAY_IMPORT)
    ]
    assert not offending, (
        "homing/store/ may import only homing.store.* and the kernel modules "
        f"{sorted(STORE_MAY_IMPORT)}; move shared types down into homing/models.py "
        "or homing/domain/ and logic that is not SQL up out of the store:\n" + "\n".join(offending)
    )


def test_no_module_above_the_store_builds_sql() -> None:
    offending = [
        f"{_where(path, line)} imports {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not any(path.is_relative_to(home) for home in SQL_HOMES)
        for line, name in _imports(path)
        if any(_within(name, package) for package in SQL_PACKAGES)
    ]
    assert not offending, (
        "SQL and database drivers belong in homing/store/ (or homing/migrations/); "
        "call a store method instead (a Database may be passed around):\n" + "\n".join(offending)
    )


def test_the_checks_see_imports_in_every_form() -> None:
    """The reader finds plain, from-, relative and function-local imports."""
    source = (
        "import homing.managers.plans\n"
        "from ..inbound import events\n"
        "from . import rows\n"
        "def f():\n"
        "    from sqlalchemy import text\n"
    )
    names = [name for _line, name in _imports_in(source, "homing.store")]
    assert names == ["homing.managers.plans", "homing.inbound", "homing.store", "sqlalchemy"]


def test_providers_do_provider_io_only() -> None:
    """No adapter reads or writes the database: the dispatcher loads what a call needs
    and records what it learns (a webhook's 410)."""
    offending = [
        f"{_where(path, line)} imports {name}"
        for path in sorted((PACKAGE / "providers").rglob("*.py"))
        for line, name in _imports(path)
        if _within(name, "homing.store") or _within(name, "homing.dispatch")
    ]
    assert not offending, "providers may not use the store or the dispatcher:\n" + "\n".join(
        offending
    )
