"""The template manager's pure rules: locales and their fallback, the live version a
send gets, and the content checks a version must pass when it is written."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from homing.domain.templates import PUBLISHED, TemplateRow, VersionRow
from homing.errors import InvalidRequest
from homing.managers.templates import Live, fallbacks, normal_locale
from homing.rendering import Limits, TemplateError
from homing.rendering.kernel import check_version

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _template(default: str = "en") -> TemplateRow:
    return TemplateRow(
        id="t1",
        tenant_id="tenant",
        key="welcome",
        name="Welcome",
        default_locale=default,
        created_at=NOW,
    )


def _version(number: int, locale: str, revision: int = 0) -> VersionRow:
    parts = {"sms": {"body": locale}}
    return VersionRow(
        id=f"v{number}",
        template_id="t1",
        tenant_id="tenant",
        number=number,
        locale=locale,
        state=PUBLISHED,
        parts=parts,
        variables=None,
        revision=revision,
        created_at=NOW,
        updated_at=NOW,
        published_at=NOW,
    )


@pytest.mark.parametrize(
    ("given", "normal"),
    [("en", "en"), ("FR-ca", "fr-CA"), ("zh-hant-tw", "zh-Hant-TW"), ("es-419", "es-419")],
)
def test_locales_are_written_in_bcp47_casing(given: str, normal: str) -> None:
    assert normal_locale(given) == normal


@pytest.mark.parametrize("bad", ["", "e", "english", "en_US", "en-", "a-" * 50, "en-" + "x" * 9])
def test_what_is_not_a_locale_is_refused(bad: str) -> None:
    with pytest.raises(InvalidRequest):
        normal_locale(bad)


def test_fallback_goes_from_region_to_language_to_the_default() -> None:
    assert fallbacks("fr-CA", "en") == ["fr-CA", "fr", "en"]
    assert fallbacks("zh-Hant-TW", "zh") == ["zh-Hant-TW", "zh-Hant", "zh"]
    assert fallbacks(None, "de") == ["de"]
    assert fallbacks("en-GB", "en") == ["en-GB", "en"]


def test_a_send_gets_the_live_version_of_the_nearest_locale() -> None:
    live = Live(_template(), (_version(1, "en"), _version(2, "fr"), _version(3, "pt-BR")))
    assert live.choose("fr-CA").number == 2
    assert live.choose("pt-BR").number == 3
    assert live.choose("pt").number == 1  # pt-BR is not a fallback of pt
    assert live.choose(None).number == 1
    with pytest.raises(TemplateError):
        Live(_template("en"), (_version(2, "fr"),)).choose("de")


def test_an_edited_draft_is_cached_under_a_new_key() -> None:
    assert _version(1, "en", revision=0).cache_key != _version(1, "en", revision=1).cache_key


@pytest.mark.parametrize(
    "parts",
    [
        {},
        {"email": {"subject": "s"}},
        {"email": {"subject": "{{ }", "text": "t"}},
        {"sms": {"body": "x" * 2000}},
    ],
)
def test_content_that_cannot_render_is_refused_when_written(parts: dict[str, Any]) -> None:
    with pytest.raises(TemplateError):
        check_version(parts, None, Limits(max_source_chars=1024))


def test_a_schema_that_is_not_json_schema_is_refused() -> None:
    check_version({"sms": {"body": "x"}}, {"type": "object"}, Limits())
    with pytest.raises(TemplateError):
        check_version({"sms": {"body": "x"}}, {"type": 12}, Limits())
    with pytest.raises(TemplateError):
        check_version({"sms": {"body": "x"}}, {"enum": ["x" * 70_000]}, Limits())
