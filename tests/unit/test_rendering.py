"""The rendering kernel in process (homing.rendering.kernel): escaping, subjects, CSS
inlining, the derived text part, SMS segments, missing and invalid variables."""

from __future__ import annotations

from typing import Any

import pytest

from homing.rendering import Limits, TemplateError, check_parts, check_schema
from homing.rendering.kernel import Renderer, text_of

LIMITS = Limits()


def render(parts: dict[str, Any], data: dict[str, Any], schema: Any = None, **kw: Any) -> Any:
    return Renderer().render(None, parts, schema, data, None, kw.get("limits", LIMITS))


def test_html_is_escaped_and_the_subject_and_text_are_not() -> None:
    out = render(
        {"email": {"subject": "Hi {{ n }}", "html": "<p>{{ n }}</p>", "text": "T {{ n }}"}},
        {"n": "<b>&"},
    )["email"]
    assert out["subject"] == "Hi <b>&"
    assert "<p>&lt;b&gt;&amp;</p>" in out["html"]
    assert out["text"] == "T <b>&"


def test_cr_and_lf_are_removed_from_a_subject() -> None:
    out = render({"email": {"subject": "A {{ s }}"}}, {"s": "x\r\nBcc: y@z.com\n"})["email"]
    assert "\r" not in out["subject"] and "\n" not in out["subject"]
    assert out["subject"] == "A x Bcc: y@z.com"


def test_css_is_inlined_and_a_text_part_is_derived_from_the_html() -> None:
    html = "<style>p { color: red }</style><h1>Hi</h1><p>Go <a href='https://e.com/x'>here</a></p>"
    out = render({"email": {"subject": "s", "html": html}}, {})["email"]
    assert '<p style="color: red;">' in out["html"]
    assert out["text"] == "Hi\n\nGo here (https://e.com/x)"


def test_text_of_drops_scripts_and_styles() -> None:
    assert text_of("<style>a{}</style><script>x()</script><p>ok</p>") == "ok"


def test_sms_segments_and_encoding_are_those_of_the_rendered_body() -> None:
    out = render({"sms": {"body": "{{ c * 20 }}"}}, {"c": "é" * 5})["sms"]
    assert out["body"] == "é" * 100
    assert (out["encoding"], out["segments"]) == ("GSM-7", 1)
    out = render({"sms": {"body": "{{ c }}"}}, {"c": "ж" * 71})["sms"]
    assert (out["encoding"], out["units"], out["segments"]) == ("UCS-2", 71, 2)


def test_chat_and_webhook_parts_render() -> None:
    out = render(
        {
            "chat": {"text": "*{{ a }}*", "format": "markdown"},
            "webhook": {"payload": {"k": ["{{ a }}", 3]}},
        },
        {"a": "x"},
    )
    assert out["chat"] == {"text": "*x*", "format": "markdown"}
    assert out["webhook"] == {"payload": {"k": ["x", 3]}}


def test_every_missing_variable_is_named() -> None:
    with pytest.raises(TemplateError) as err:
        render({"email": {"subject": "{{ a }}", "html": "{{ b }}{{ c.d }}"}}, {"b": 1})
    assert err.value.code == "template_error"
    assert err.value.details == {"missing": ["a", "c"]}


def test_a_missing_attribute_is_named_without_the_value() -> None:
    with pytest.raises(TemplateError) as err:
        render({"sms": {"body": "{{ user.name }}"}}, {"user": {"secret": "s3cr3t"}})
    assert err.value.details["missing"] == ["name"]
    assert "s3cr3t" not in repr(err.value.details) + err.value.message


def test_the_variables_schema_is_enforced_and_names_the_place_not_the_value() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n", "m"]}
    with pytest.raises(TemplateError) as err:
        render({"sms": {"body": "{{ n }}"}}, {"n": "private-value"}, schema)
    invalid = err.value.details["invalid"]
    assert {"path": "/n", "rule": "type"} in invalid
    assert {"path": "/", "rule": "required"} in invalid
    assert "private-value" not in repr(err.value.details)


def test_a_part_for_another_channel_is_refused() -> None:
    with pytest.raises(TemplateError) as err:
        Renderer().render(None, {"sms": {"body": "x"}}, None, {}, ["email"], LIMITS)
    assert err.value.details == {"channels": ["email"]}


def test_check_parts_refuses_bad_shapes_sizes_and_syntax() -> None:
    check_parts({"email": {"subject": "s", "html": "{{ a }}"}}, LIMITS)
    for parts in (
        {"fax": {"body": "x"}},
        {"email": {"html": "no subject"}},
        {"chat": {"text": "x", "format": "bbcode"}},
        {"sms": {"body": "{% for %}"}},
        {"sms": {"body": "x" * (LIMITS.max_source_chars + 1)}},
    ):
        with pytest.raises(TemplateError):
            check_parts(parts, LIMITS)


def test_check_schema_refuses_what_is_not_a_json_schema() -> None:
    check_schema({"type": "object"})
    with pytest.raises(TemplateError):
        check_schema({"type": 12})
    with pytest.raises(TemplateError):
        check_schema([])


def test_output_is_stopped_at_the_bound_while_it_streams() -> None:
    small = Limits(max_output_chars=1000)
    with pytest.raises(TemplateError) as err:
        render(
            {"sms": {"body": "{% for i in range(100000) %}xxxxxxxxxx{% endfor %}"}},
            {},
            limits=small,
        )
    assert "over 1000 characters" in err.value.message
