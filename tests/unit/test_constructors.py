"""A dataclass of ``homing`` with six fields or more is built with keywords only
(``@dataclass(kw_only=True, …)``): a call that names each value cannot swap two of
them unnoticed, and a field added later cannot shift the ones after it
(docs/architecture.md, "Values of six fields or more are built by name")."""

from __future__ import annotations

import ast
from pathlib import Path

import homing

ROOT = Path(homing.__file__).resolve().parent
MOST_POSITIONAL = 5


def _fields(node: ast.ClassDef) -> int:
    def class_var(annotation: ast.expr) -> bool:
        target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
        return isinstance(target, ast.Name | ast.Attribute) and ast.unparse(target).endswith(
            "ClassVar"
        )

    return sum(1 for s in node.body if isinstance(s, ast.AnnAssign) and not class_var(s.annotation))


def _dataclass(node: ast.ClassDef) -> ast.expr | None:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if ast.unparse(target) in ("dataclass", "dataclasses.dataclass"):
            return decorator
    return None


def _keyword_only(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and any(
        k.arg == "kw_only" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in decorator.keywords
    )


def wide_positional() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef):
                continue
            decorator = _dataclass(node)
            if decorator is None or _fields(node) <= MOST_POSITIONAL:
                continue
            if not _keyword_only(decorator):
                found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.name}")
    return found


def test_a_dataclass_of_six_fields_or_more_is_keyword_only() -> None:
    assert wide_positional() == []


def test_the_check_sees_a_wide_positional_dataclass() -> None:
    wide = "@dataclass(frozen=True)\nclass Wide:\n" + "".join(f"    f{i}: int\n" for i in range(6))
    tree = ast.parse(wide)
    node = tree.body[0]
    assert isinstance(node, ast.ClassDef)
    decorator = _dataclass(node)
    assert decorator is not None and _fields(node) == 6 and not _keyword_only(decorator)
    kept = ast.parse(wide.replace("(frozen=True)", "(kw_only=True, frozen=True)")).body[0]
    assert isinstance(kept, ast.ClassDef)
    decorator = _dataclass(kept)
    assert decorator is not None and _keyword_only(decorator)
