"""The rendering itself, as run inside a worker process (homing.rendering.render_worker).

A version's parts are ``{"email": {"subject", "html"?, "text"?}, "sms": {"body"},
"chat": {"text", "format"?}, "webhook": {"payload"}}``; every string in them is a
Jinja2 template. HTML is autoescaped (an email's, and a chat text of format ``html``);
subjects, other texts and SMS bodies are not; CR and LF are removed from subjects. Each
part's output is counted while it streams out of ``Template.generate()`` so a huge
string is stopped at the bound, not after it was built.
"""

from __future__ import annotations

import html as html_lib
from collections import OrderedDict
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Final

import css_inline
import jsonschema
import orjson
from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError, meta
from jinja2.exceptions import SecurityError
from jinja2.exceptions import TemplateError as JinjaTemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

from homing.errors import InvalidRequest
from homing.models import SmsSegments
from homing.settings import TemplateSettings

_DEFAULT = TemplateSettings()

CHANNELS: Final = ("email", "sms", "chat", "webhook", "in_app")
# The string fields of each channel's part that are templates (webhook: every string
# leaf of its payload).
FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "email": ("subject", "html", "text"),
    "sms": ("body",),
    "chat": ("text",),
    "in_app": ("title", "body", "url"),
}
REQUIRED: Final[dict[str, tuple[str, ...]]] = {
    "email": ("subject",),
    "sms": ("body",),
    "chat": ("text",),
    "webhook": ("payload",),
    "in_app": ("body",),
}
# As the chat endpoint takes them (homing.api.schemas.chat).
CHAT_FORMATS: Final = frozenset({"plain", "markdown", "html"})
# A webhook payload template: at most this deep and this many strings.
MAX_PAYLOAD_DEPTH: Final = 16
MAX_PAYLOAD_STRINGS: Final = 1000
MAX_ISSUES: Final = 50
# A version's ``variables`` schema: at most this many bytes, as compact JSON, and this deep.
MAX_SCHEMA_BYTES: Final = 65_536
MAX_SCHEMA_DEPTH: Final = 32
# The variable a layout shows the email's rendered HTML with (docs/templates.md, "Layouts").
CONTENT: Final = "content"


class TemplateError(InvalidRequest):
    """The template cannot be rendered with this data."""

    code = "template_error"


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of one render (docs/settings.md, HOMING_TEMPLATE_*)."""

    max_source_chars: int = _DEFAULT.max_source_chars
    max_output_chars: int = _DEFAULT.max_rendered_chars
    timeout_s: float = _DEFAULT.render_timeout_seconds


class _Environment(ImmutableSandboxedEnvironment):
    """The immutable sandbox, with ``*`` and ``**`` checked before they run: a string or
    list repeated past the output bound, or a power with a huge exponent, is refused
    instead of being built (and constant folding of them at compile time is off)."""

    intercepted_binops = frozenset({"*", "**"})
    max_output_chars = 262_144  # set to the render's bound before each render

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(times, int):
                    if len(seq) * max(times, 0) > self.max_output_chars:
                        raise SecurityError("the result would exceed the output bound")
        if operator == "**" and isinstance(right, int) and abs(right) > 64:
            raise SecurityError("the exponent is too large")
        return super().call_binop(context, operator, left, right)


def _environment(autoescape: bool) -> _Environment:
    env = _Environment(autoescape=autoescape, undefined=StrictUndefined, cache_size=0)
    # No template may load another: there is no loader, and include/import/extends fail.
    return env


HTML_ENV: Final = _environment(autoescape=True)
TEXT_ENV: Final = _environment(autoescape=False)


def _env(channel: str, path: str, part: dict[str, Any]) -> _Environment:
    """The environment a part's field renders in: autoescaped where its output is HTML
    (an email's, a chat text of ``"format": "html"``), so data never becomes markup."""
    if (channel, path) == ("email", "html"):
        return HTML_ENV
    if (channel, path) == ("chat", "text") and part.get("format") == "html":
        return HTML_ENV
    return TEXT_ENV


def _strings(part: dict[str, Any], channel: str) -> list[tuple[str, str]]:
    """Each template string of one part, as (its path, its source)."""
    if channel == "webhook":
        found: list[tuple[str, str]] = []
        _walk(part.get("payload"), "payload", 0, found)
        return found
    return [(f, part[f]) for f in FIELDS[channel] if isinstance(part.get(f), str)]


def _walk(value: Any, path: str, depth: int, found: list[tuple[str, str]]) -> None:
    if depth > MAX_PAYLOAD_DEPTH:
        raise TemplateError("the webhook payload is nested too deeply")
    if isinstance(value, str):
        if len(found) >= MAX_PAYLOAD_STRINGS:
            raise TemplateError("the webhook payload holds too many strings")
        found.append((path, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            _walk(v, f"{path}.{k}", depth + 1, found)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk(v, f"{path}.{i}", depth + 1, found)


def check_parts(parts: dict[str, Any], limits: Limits) -> None:
    """Refuse parts whose shape, size or syntax is wrong (at version create and edit):
    each string is compiled as a render would compile it."""
    if not isinstance(parts, dict):
        raise TemplateError("the parts must be an object")
    for channel, part in parts.items():
        if channel not in CHANNELS:
            raise TemplateError(f"unknown channel {channel!r}"[:120])
        if not isinstance(part, dict):
            raise TemplateError(f"the {channel} part must be an object")
        for field in REQUIRED[channel]:
            if part.get(field) is None:
                raise TemplateError(f"the {channel} part needs {field!r}")
        if channel == "chat" and part.get("format", "plain") not in CHAT_FORMATS:
            raise TemplateError("chat format is 'plain', 'markdown' or 'html'")
        total = 0
        for path, source in _strings(part, channel):
            total += len(source)
            if total > limits.max_source_chars:
                raise TemplateError(
                    f"the {channel} part is over {limits.max_source_chars} characters"
                )
            env = _env(channel, path, part)
            _compile(env, source, f"{channel}.{path}")


def _compile(env: _Environment, source: str, where: str) -> Any:
    """``source`` parsed and compiled as a render would (its AST); TemplateError naming
    ``where`` for a syntax error, or nesting past what the parser or Python's compiler
    can take (the recursion limit, Python's own bounds on nesting)."""
    try:
        ast = env.parse(source)
        env.compile(ast)
    except TemplateSyntaxError as exc:
        raise TemplateError(
            f"{where}: syntax error on line {exc.lineno}",
            {"part": where, "line": exc.lineno, "error": exc.message},
        ) from None
    except (RecursionError, SyntaxError):
        raise TemplateError(
            f"{where}: the template is nested too deeply", {"part": where}
        ) from None
    return ast


def check_layout(html: Any, max_chars: int) -> None:
    """Refuse a layout's HTML that is not a string, is over ``max_chars``, does not parse
    or never shows ``{{ content }}`` (where the email's own HTML goes)."""
    if not isinstance(html, str):
        raise TemplateError("a layout needs 'html'")
    if len(html) > max_chars:
        raise TemplateError(f"the layout is over {max_chars} characters", {"limit": max_chars})
    ast = _compile(HTML_ENV, html, "layout.html")
    try:
        shown = meta.find_undeclared_variables(ast)
    except RecursionError:
        raise TemplateError(
            "layout.html: the template is nested too deeply", {"part": "layout.html"}
        ) from None
    if CONTENT not in shown:
        raise TemplateError(
            "the layout must show the email's content with {{ content }}",
            {"part": "layout.html"},
        )


def nested_deeper(value: Any, most: int) -> bool:
    """Whether the JSON ``value`` nests objects and arrays deeper than ``most`` (a
    scalar is 0 deep, ``{}`` 1): one pass, no recursion, so any depth is safe to ask."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > most:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def check_depth(parts: Any, variables: Any) -> None:
    """Refuse parts or a ``variables`` schema nested deeper than their bounds, before
    anything recursive (a check, pickling it for a worker, JSON) walks them."""
    if nested_deeper(parts, MAX_PAYLOAD_DEPTH + 3):
        raise TemplateError("the webhook payload is nested too deeply")
    if nested_deeper(variables, MAX_SCHEMA_DEPTH):
        raise TemplateError(
            f"variables is nested too deeply (at most {MAX_SCHEMA_DEPTH} levels)",
            {"limit": MAX_SCHEMA_DEPTH},
        )


def check_schema(schema: Any) -> None:
    """Refuse a ``variables`` value that is not a valid JSON Schema."""
    if schema is None:
        return
    if not isinstance(schema, dict):
        raise TemplateError("variables must be a JSON Schema object")
    check_depth(None, schema)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise TemplateError(
            "variables is not a valid JSON Schema", {"error": exc.message[:200]}
        ) from None
    except RecursionError:
        raise TemplateError("variables is nested too deeply") from None


def check_version(parts: Any, variables: Any, limits: Limits) -> None:
    """TemplateError unless ``parts`` and ``variables`` make a version that renders:
    what a version is checked for when it is written (in a render worker, under the
    render budget: compiling every part and checking the schema may take a while)."""
    if not isinstance(parts, dict) or not parts:
        raise TemplateError("a version needs a part for at least one channel")
    email = parts.get("email")
    if isinstance(email, dict) and email.get("html") is None and email.get("text") is None:
        raise TemplateError("the email part needs 'html', 'text' or both")
    check_parts(parts, limits)
    if variables is not None and len(orjson.dumps(variables)) > MAX_SCHEMA_BYTES:
        raise TemplateError(f"variables is over {MAX_SCHEMA_BYTES} bytes")
    check_schema(variables)


class _TextOf(HTMLParser):
    """A plain-text rendering of an HTML body: text kept, blocks on their own lines,
    link targets after their text, script and style dropped."""

    BLOCKS: Final = frozenset(
        {"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "hr"}
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0
        self.href: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head", "title"):
            self.skip += 1
        elif tag in self.BLOCKS:
            self.out.append("\n")
        if tag == "a":
            self.href.append(dict(attrs).get("href"))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head", "title"):
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCKS:
            self.out.append("\n")
        if tag == "a" and self.href:
            href = self.href.pop()
            if href and href.startswith(("http://", "https://", "mailto:")):
                self.out.append(f" ({href})")

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.out.append(data)


def text_of(html: str) -> str:
    parser = _TextOf()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.out).splitlines())
    text, blank = [], False
    for line in lines:
        if line:
            text.append(line)
            blank = False
        elif not blank and text:
            text.append("")
            blank = True
    return "\n".join(text).strip()


_INLINER: Final = css_inline.CSSInliner(load_remote_stylesheets=False, keep_at_rules=True)


class Renderer:
    """Compiles and renders parts; keeps the compiled templates of recent versions."""

    def __init__(self, cache_size: int = 256) -> None:
        self.cache: OrderedDict[str, dict[tuple[str, str], Any]] = OrderedDict()
        self.cache_size = cache_size

    def compiled(self, version_id: str | None, parts: dict[str, Any]) -> dict[tuple[str, str], Any]:
        if version_id is not None and version_id in self.cache:
            self.cache.move_to_end(version_id)
            return self.cache[version_id]
        found: dict[tuple[str, str], Any] = {}
        for channel, part in parts.items():
            for path, source in _strings(part, channel):
                env = _env(channel, path, part)
                try:
                    ast = env.parse(source)
                    found[(channel, path)] = (
                        env.from_string(ast),
                        meta.find_undeclared_variables(ast),
                    )
                except TemplateSyntaxError as exc:
                    raise TemplateError(
                        f"{channel}.{path}: syntax error on line {exc.lineno}"
                    ) from None
                except (RecursionError, SyntaxError):
                    raise TemplateError(
                        f"{channel}.{path}: the template is nested too deeply"
                    ) from None
        if version_id is not None:
            self.cache[version_id] = found
            while len(self.cache) > self.cache_size:
                self.cache.popitem(last=False)
        return found

    def compiled_layout(self, cache_key: str, html: str) -> dict[tuple[str, str], Any]:
        """A layout's compiled HTML, cached beside the versions (under ``layout:``)."""
        key = f"layout:{cache_key}"
        if key in self.cache:
            self.cache.move_to_end(key)
            return self.cache[key]
        try:
            ast = HTML_ENV.parse(html)
            found = {
                ("layout", "html"): (
                    HTML_ENV.from_string(ast),
                    meta.find_undeclared_variables(ast),
                )
            }
        except TemplateSyntaxError as exc:
            raise TemplateError(f"layout.html: syntax error on line {exc.lineno}") from None
        except (RecursionError, SyntaxError):
            raise TemplateError("layout.html: the template is nested too deeply") from None
        self.cache[key] = found
        while len(self.cache) > self.cache_size:
            self.cache.popitem(last=False)
        return found

    def render(
        self,
        version_id: str | None,
        parts: dict[str, Any],
        schema: dict[str, Any] | None,
        data: dict[str, Any],
        channels: list[str] | None,
        limits: Limits,
        layout: tuple[str, str] | None = None,
    ) -> dict[str, Any]:
        """Render ``channels`` (None: every part) of one version with ``data``; an
        email's HTML inside ``layout`` ((its cache key, its HTML)) when one is given."""
        if not isinstance(data, dict):
            raise TemplateError("data must be an object")
        HTML_ENV.max_output_chars = TEXT_ENV.max_output_chars = limits.max_output_chars
        wanted = [c for c in (channels or list(parts)) if c in parts]
        if channels and len(wanted) < len(channels):
            missing_parts = sorted(set(channels) - set(wanted))
            raise TemplateError(
                "the template has no part for this channel", {"channels": missing_parts}
            )
        if schema:
            validator = jsonschema.Draft202012Validator(schema)
            invalid = []
            for err in validator.iter_errors(data):
                # The rule and the place, never the value (it may be personal data).
                invalid.append(
                    {
                        "path": "/" + "/".join(str(p) for p in err.absolute_path),
                        "rule": str(err.validator),
                    }
                )
                if len(invalid) >= MAX_ISSUES:
                    break
            if invalid:
                raise TemplateError(
                    "the data does not match the template's variables", {"invalid": invalid}
                )
        compiled = self.compiled(version_id, {c: parts[c] for c in parts})
        if layout is not None and "email" in wanted and ("email", "html") in compiled:
            compiled = {**compiled, **self.compiled_layout(*layout)}
            wanted_keys = {*wanted, "layout"}
        else:
            wanted_keys = set(wanted)
        missing = sorted(
            {
                name
                for key, (_, names) in compiled.items()
                if key[0] in wanted_keys
                for name in names
            }
            - set(data)
            - ({CONTENT} if "layout" in wanted_keys else set())
        )
        if missing:
            raise TemplateError(
                "the data lacks variables the template uses", {"missing": missing[:MAX_ISSUES]}
            )
        out: dict[str, Any] = {}
        for channel in wanted:
            out[channel] = self._part(channel, parts[channel], compiled, data, limits)
        return out

    def _one(self, template: Any, data: dict[str, Any], where: str, limits: Limits) -> str:
        chunks: list[str] = []
        size = 0
        try:
            for chunk in template.generate(**data):
                size += len(chunk)
                if size > limits.max_output_chars:
                    raise TemplateError(
                        f"{where}: the rendered text is over {limits.max_output_chars} characters",
                        {"part": where},
                    )
                chunks.append(chunk)
        except TemplateError:
            raise
        except UndefinedError as exc:
            raise TemplateError(
                f"{where}: a variable is undefined",
                {"part": where, "missing": [_undefined_name(exc)]},
            ) from None
        except SecurityError:
            raise TemplateError(
                f"{where}: the template does something unsafe", {"part": where}
            ) from None
        except RecursionError:
            raise TemplateError(
                f"{where}: the template recurses too deeply", {"part": where}
            ) from None
        except MemoryError:
            raise TemplateError(
                f"{where}: the template needs too much memory", {"part": where}
            ) from None
        except (
            JinjaTemplateError,
            ArithmeticError,
            TypeError,
            ValueError,
            LookupError,
            AttributeError,
        ):
            raise TemplateError(
                f"{where}: the template failed to render", {"part": where}
            ) from None
        return "".join(chunks)

    def _part(
        self,
        channel: str,
        part: dict[str, Any],
        compiled: dict[tuple[str, str], Any],
        data: dict[str, Any],
        limits: Limits,
    ) -> dict[str, Any]:
        def get(path: str) -> str | None:
            found = compiled.get((channel, path))
            return None if found is None else self._one(found[0], data, f"{channel}.{path}", limits)

        if channel == "email":
            subject = " ".join((get("subject") or "").replace("\r", " ").replace("\n", " ").split())
            html = get("html")
            text = get("text")
            framing = compiled.get(("layout", "html"))
            if html is not None and framing is not None:
                # The email's HTML was autoescaped as it rendered: the layout shows it
                # as it is (Markup), and everything else it prints is escaped.
                framed = {**data, CONTENT: Markup(html)}
                html = self._one(framing[0], framed, "layout.html", limits)
            if html is not None:
                try:
                    html = _INLINER.inline(html)
                except Exception:  # css_inline raises its own error types for bad CSS
                    raise TemplateError(
                        "email.html: the CSS cannot be inlined", {"part": "email.html"}
                    ) from None
                if text is None:
                    text = text_of(html)
            return {"subject": subject, "html": html, "text": text}
        if channel == "sms":
            body = get("body") or ""
            seg = SmsSegments.of(body)
            return {
                "body": body,
                "encoding": str(seg.encoding),
                "units": seg.units,
                "segments": seg.segments,
            }
        if channel == "chat":
            return {"text": get("text") or "", "format": part.get("format", "plain")}
        if channel == "in_app":
            # Text, shown with textContent: no markup is ever made of it.
            return {"title": get("title"), "body": get("body") or "", "url": get("url")}
        return {"payload": self._payload(part["payload"], "payload", compiled, data, limits)}

    def _payload(
        self,
        value: Any,
        path: str,
        compiled: dict[tuple[str, str], Any],
        data: dict[str, Any],
        limits: Limits,
    ) -> Any:
        if isinstance(value, str):
            return self._one(compiled[("webhook", path)][0], data, f"webhook.{path}", limits)
        if isinstance(value, dict):
            return {
                k: self._payload(v, f"{path}.{k}", compiled, data, limits) for k, v in value.items()
            }
        if isinstance(value, list):
            return [
                self._payload(v, f"{path}.{i}", compiled, data, limits) for i, v in enumerate(value)
            ]
        return value


def _undefined_name(exc: UndefinedError) -> str:
    # "'name' is undefined" or "'dict object' has no attribute 'name'": the name only.
    message = str(exc.message or "")
    quoted = message.split("'")
    return html_lib.escape(quoted[-2] if len(quoted) >= 3 else "?")[:80]


__all__ = [
    "CHANNELS",
    "Limits",
    "Renderer",
    "TemplateError",
    "check_depth",
    "check_layout",
    "check_parts",
    "check_schema",
    "check_version",
    "nested_deeper",
]
