"""The migration graph stays one linear chain, so an operator's new revision has one
parent and ``homing migrate`` upgrades to ``head``."""

from __future__ import annotations

from alembic.config import Config
from alembic.script import ScriptDirectory


def _scripts() -> ScriptDirectory:
    config = Config()
    config.set_main_option("script_location", "homing:migrations")
    return ScriptDirectory.from_config(config)


def test_migrations_have_exactly_one_head() -> None:
    assert len(_scripts().get_heads()) == 1, _scripts().get_heads()


def test_every_revision_after_the_merge_has_one_parent() -> None:
    scripts = _scripts()
    for revision in scripts.walk_revisions():
        if revision.revision in {"0006"}:
            continue
        parents = revision.down_revision
        assert parents is None or isinstance(parents, str), revision.revision
