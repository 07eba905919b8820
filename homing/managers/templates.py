"""Templates: their rules, and rendering one for a send (docs/templates.md).

Content is checked when a version is written (shape, size, Jinja2 syntax, the
``variables`` schema), so a send meets only data problems. A send names a template by
key or id; its live version is chosen by locale (``fr-CA`` → ``fr`` → the template's
default locale) and rendered in the render pool (``homing.rendering``), whose time
budget and memory limit bound whatever the tenant wrote. A batch looks each distinct
template up once (``lookup``), then renders per item.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Protocol

import orjson

from homing.domain.audit import AuditEvent
from homing.domain.templates import TemplateRow, VersionRow
from homing.errors import InvalidRequest, NotFound
from homing.managers.audit import AuditLog
from homing.models import Actor, AuditAction
from homing.ratelimit import RateLimiter
from homing.rendering import RenderPool, TemplateError
from homing.rendering.kernel import check_depth
from homing.settings import TemplateSettings
from homing.store.templates import TemplateStore

_DEFAULT = TemplateSettings()


# A language subtag and up to three more (region, script, variant): BCP 47's common shapes.
LOCALE: Final = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8}){0,3}")
MAX_LOCALE: Final = 35
# A template's or layout's key: a slug that never has the shape of an id (as the API's
# schema checks it; the console's forms reach ``create`` without that schema).
KEY: Final = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")


def normal_locale(value: str) -> str:
    """``fr-ca`` → ``fr-CA``, ``zh-hant-tw`` → ``zh-Hant-TW`` (BCP 47's casing);
    InvalidRequest when ``value`` is not a locale."""
    if len(value) > MAX_LOCALE or not LOCALE.fullmatch(value):
        raise InvalidRequest("not a locale (such as 'en' or 'fr-CA')", {"field": "locale"})
    first, *rest = value.split("-")
    out = [first.lower()]
    for sub in rest:
        if len(sub) == 2 and sub.isalpha():
            out.append(sub.upper())
        elif len(sub) == 4 and sub.isalpha():
            out.append(sub.title())
        else:
            out.append(sub.lower())
    return "-".join(out)


def check_key(key: str) -> None:
    """InvalidRequest unless ``key`` is a slug (lower-case letters, digits, ``-``, ``_``,
    ``.``; at most 64) without the shape of an id."""
    problem = "a key is lower-case letters, digits, '-', '_' and '.', at most 64"
    if len(key) > 64 or not KEY.fullmatch(key):
        raise InvalidRequest(problem, {"field": "key"})
    try:
        uuid.UUID(key)
    except ValueError:
        return
    raise InvalidRequest("a key must not have the shape of an id", {"field": "key"})


def fallbacks(locale: str | None, default: str) -> list[str]:
    """The locales tried in order: ``fr-CA`` → ``fr`` → ``default``."""
    chain: list[str] = []
    if locale is not None:
        parts = locale.split("-")
        chain = ["-".join(parts[:n]) for n in range(len(parts), 0, -1)]
    if default not in chain:
        chain.append(default)
    return chain


@dataclass(kw_only=True, frozen=True, slots=True)
class TemplateBounds:
    """How many templates a tenant, and versions a template, may hold; the size of a
    send's data (HOMING_TEMPLATE_MAX_*)."""

    templates: int = _DEFAULT.max_templates
    versions: int = _DEFAULT.max_versions
    data_bytes: int = _DEFAULT.max_data_bytes
    # How long a send may reuse this process's lookup of a template and its live
    # versions (HOMING_TEMPLATE_CACHE_SECONDS; 0: never). A publish or delete through
    # this process drops its entries at once; other processes see it within this time.
    cache_seconds: float = _DEFAULT.cache_seconds
    cache_entries: int = 10_000
    # Previews and version writes a tenant may make a minute, templates and layouts
    # together (HOMING_TEMPLATE_CHECKS_PER_MINUTE): each takes a render worker.
    checks_per_minute: int = _DEFAULT.checks_per_minute


@dataclass(frozen=True, slots=True)
class Live:
    """A template and its live versions (one per locale), as a send reads them."""

    template: TemplateRow
    versions: tuple[VersionRow, ...]

    def choose(self, locale: str | None) -> VersionRow:
        """The live version for ``locale`` by fallback; TemplateError when none is."""
        by_locale = {v.locale: v for v in self.versions}
        for candidate in fallbacks(locale, self.template.default_locale):
            if candidate in by_locale:
                return by_locale[candidate]
        raise TemplateError(
            "the template has no published version for this locale",
            {"template": self.template.key, "locale": locale},
        )


@dataclass(frozen=True, slots=True)
class Frame:
    """The layout version an email is rendered inside, and what the job records of it."""

    version: VersionRow
    record: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Rendered:
    """A send's rendered part for its channel, and what the job records of the template."""

    part: dict[str, Any]
    template: dict[str, Any]


class Frames(Protocol):
    """Where an email's layout comes from (``homing.managers.layouts.Layouts``)."""

    async def frame(self, tenant_id: str, key: str | None, locale: str) -> Frame | None: ...


class Templates:
    """Templates and versions of each tenant, and rendering them. A change made with an
    ``actor`` is recorded in the audit log in the change's own transaction."""

    noun = "template"
    ACTIONS: ClassVar[dict[str, AuditAction]] = {
        "created": AuditAction.TEMPLATE_CREATED,
        "deleted": AuditAction.TEMPLATE_DELETED,
        "added": AuditAction.TEMPLATE_VERSION_ADDED,
        "edited": AuditAction.TEMPLATE_VERSION_EDITED,
        "published": AuditAction.TEMPLATE_VERSION_PUBLISHED,
    }

    def __init__(
        self,
        store: TemplateStore,
        pool: RenderPool,
        bounds: TemplateBounds,
        now: Callable[[], float] = time.monotonic,
        limiter: RateLimiter | None = None,
        *,
        layouts: Frames | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.store = store
        self.pool = pool
        self.bounds = bounds
        self._now = now
        # Counts each tenant's previews and version writes (None: not counted).
        self.limiter = limiter
        # (tenant id, ref) → (until, Live): found templates only, so refs that name
        # nothing cannot fill it; bounded, oldest dropped first.
        self._cache: OrderedDict[tuple[str, str], tuple[float, Live]] = OrderedDict()
        # The email layouts (homing.managers.layouts) and the audit log.
        self.layouts = layouts
        self.audit = audit

    def _event(
        self,
        actor: Actor | None,
        change: str,
        tenant_id: str,
        target_id: str | None,
        **changes: Any,
    ) -> AuditEvent | None:
        """The audit event of a change by ``actor`` (None: not recorded)."""
        if actor is None or self.audit is None:
            return None
        return self.audit.event(
            actor,
            self.ACTIONS[change],
            tenant_id=tenant_id,
            target_type=self.noun,
            target_id=target_id,
            changes=changes,
        )

    async def create(
        self,
        tenant_id: str,
        key: str,
        name: str | None,
        default_locale: str | None,
        actor: Actor | None = None,
    ) -> TemplateRow:
        """A new template; InvalidRequest for a key that is no slug, Conflict when it
        is taken or the tenant holds the most."""
        check_key(key)
        locale = normal_locale(default_locale or "en")
        event = self._event(actor, "created", tenant_id, None, key=key, default_locale=locale)
        most = self.bounds.templates
        return await self.store.create(tenant_id, key, name or key, locale, most, event)

    async def get(self, tenant_id: str, ref: str) -> TemplateRow:
        """The tenant's template by id or key; NotFound otherwise (another tenant's too)."""
        found = await self.store.get(tenant_id, ref)
        if found is None:
            raise NotFound(f"no such {self.noun}")
        return found

    async def page(
        self, tenant_id: str, limit: int, after: str | None
    ) -> tuple[list[TemplateRow], bool]:
        """A page of the tenant's templates, and whether more follow."""
        return await self.store.page(tenant_id, limit, after)

    async def versions(
        self, template: TemplateRow, limit: int, before: int | None
    ) -> tuple[list[VersionRow], bool]:
        """A page of the template's versions, newest first, and whether more follow."""
        return await self.store.versions(template, limit, before)

    async def delete(self, tenant_id: str, ref: str, actor: Actor | None = None) -> None:
        """Remove a template and its versions. Jobs already accepted with it keep their
        rendered content and send as they are."""
        template = await self.get(tenant_id, ref)
        event = self._event(actor, "deleted", tenant_id, template.id, key=template.key)
        await self.store.delete(tenant_id, template.id, event)
        self._forget(template)

    async def channels(self, tenant_id: str, ids: Collection[str]) -> dict[str, list[str]]:
        """The channels each template's live versions serve, by template id."""
        served: dict[str, set[str]] = {i: set() for i in ids}
        for version in await self.store.live(tenant_id, ids):
            served[version.template_id].update(version.parts)
        return {i: sorted(c) for i, c in served.items()}

    async def take_turn(self, tenant_id: str) -> None:
        """Count one preview or version write of the tenant's; RateLimited (429) past
        ``checks_per_minute``: each may hold a render worker for the whole budget."""
        if self.limiter is None:
            return
        per_minute = self.bounds.checks_per_minute
        decision = await self.limiter.hit(f"template-checks:tenant:{tenant_id}", per_minute, 60)
        decision.enforce(60, "template previews and version writes")

    async def check_content(
        self, tenant_id: str, parts: dict[str, Any], variables: dict[str, Any] | None
    ) -> None:
        """TemplateError unless ``parts`` and ``variables`` make a version that renders
        (``homing.rendering.kernel.check_version``): checked in a render worker within
        the render budget, the tenant's turn at one; only their depth is checked here."""
        check_depth(parts, variables)
        await self.pool.check_version(parts, variables, tenant=tenant_id)

    async def add_version(
        self,
        tenant_id: str,
        ref: str,
        locale: str | None,
        parts: dict[str, Any],
        variables: dict[str, Any] | None,
        actor: Actor | None = None,
    ) -> VersionRow:
        """A new draft of the template, checked first (422 ``template_error``)."""
        await self.take_turn(tenant_id)
        template = await self.get(tenant_id, ref)
        chosen = normal_locale(locale) if locale is not None else template.default_locale
        await self.check_content(tenant_id, parts, variables)
        event = self._event(actor, "added", tenant_id, template.id, key=template.key)
        return await self.store.add_version(
            template, chosen, parts, variables, self.bounds.versions, event
        )

    async def edit_version(
        self,
        tenant_id: str,
        ref: str,
        version_id: str,
        locale: str | None,
        parts: dict[str, Any | None],
        variables: tuple[dict[str, Any] | None] | None,
        actor: Actor | None = None,
    ) -> VersionRow:
        """Change a draft: ``parts`` replaces the channels it names (None removes one),
        ``variables`` (when given, as a 1-tuple) replaces the schema. Conflict when the
        version is published or retired."""
        await self.take_turn(tenant_id)
        template = await self.get(tenant_id, ref)
        current = await self.version(template, version_id)
        merged = {**current.parts, **parts}
        merged = {c: p for c, p in merged.items() if p is not None}
        schema = current.variables if variables is None else variables[0]
        await self.check_content(tenant_id, merged, schema)
        changes: dict[str, Any] = {"parts": merged, "variables": schema}
        if locale is not None:
            changes["locale"] = normal_locale(locale)
        event = self._event(
            actor,
            "edited",
            tenant_id,
            template.id,
            key=template.key,
            version=current.number,
            parts=sorted(c for c, p in parts.items() if p is not None),
        )
        return await self.store.edit(template, version_id, changes, event)

    async def version(self, template: TemplateRow, ref: str | int) -> VersionRow:
        found = await self.store.version(template, ref)
        if found is None:
            raise NotFound("no such version")
        return found

    async def publish(
        self, tenant_id: str, ref: str, version_id: str, actor: Actor | None = None
    ) -> VersionRow:
        """Make a version its locale's live one; jobs already accepted keep their content."""
        template = await self.get(tenant_id, ref)
        event = self._event(actor, "published", tenant_id, template.id, key=template.key)
        try:
            return await self.store.publish(template, version_id, event)
        finally:
            self._forget(template)

    async def lookup(self, tenant_id: str, refs: Collection[str]) -> dict[str, Live]:
        """Each named template with its live versions, by the ref it was named with (one
        query, however many refs); a ref that names none of the tenant's is absent."""
        if not refs:
            return {}
        now = self._now()
        found: dict[str, Live] = {}
        for ref in refs:
            cached = self._cache.get((tenant_id, ref))
            if cached is not None and cached[0] > now:
                found[ref] = cached[1]
        wanted = [ref for ref in refs if ref not in found]
        if not wanted:
            return found
        for row, versions in await self.store.lookup(tenant_id, wanted):
            live = Live(row, tuple(versions))
            for ref in (row.id, row.key):
                if ref in refs:
                    found[ref] = live
                self._remember(tenant_id, ref, now, live)
        return found

    def _remember(self, tenant_id: str, ref: str, now: float, live: Live) -> None:
        if self.bounds.cache_seconds <= 0:
            return
        self._cache[(tenant_id, ref)] = (now + self.bounds.cache_seconds, live)
        self._cache.move_to_end((tenant_id, ref))
        while len(self._cache) > self.bounds.cache_entries:
            self._cache.popitem(last=False)

    def _forget(self, template: TemplateRow) -> None:
        for ref in (template.id, template.key):
            self._cache.pop((template.tenant_id, ref), None)

    async def render(
        self,
        live: Live | None,
        ref: str,
        channel: str,
        data: dict[str, Any],
        locale: str | None,
        runaway: set[str] | None = None,
    ) -> Rendered:
        """Render the live version for ``locale`` of ``live`` (None: ``ref`` named no
        template of the tenant's) for ``channel``; TemplateError (422) otherwise.

        ``runaway`` (one per request) holds the versions that ran past the time budget
        in this request: a batch's later items of such a version are refused without
        taking a render worker again, so one request cannot hold the pool for long."""
        if live is None:
            raise TemplateError("no such template", {"template": ref[:64]})
        chosen = live.choose(None if locale is None else normal_locale(locale))
        if channel not in chosen.parts:
            raise TemplateError(
                f"the template has no {channel} part",
                {"template": live.template.key, "channels": sorted(chosen.parts)},
            )
        if runaway is not None and chosen.cache_key in runaway:
            raise TemplateError(
                "the template ran past the time budget for an earlier message of this request"
            )
        frame = await self._frame(live.template.tenant_id, chosen, [channel])
        try:
            part = (await self._render(chosen, data, [channel], frame))[channel]
        except TemplateError as exc:
            if runaway is not None and "budget_s" in exc.details:
                runaway.add(chosen.cache_key)
            raise
        template: dict[str, Any] = {
            "id": live.template.id,
            "key": live.template.key,
            "version": chosen.number,
            "locale": chosen.locale,
        }
        if frame is not None:
            template["layout"] = frame.record
        return Rendered(part, template)

    async def _frame(
        self, tenant_id: str, version: VersionRow, channels: list[str] | None
    ) -> Frame | None:
        """The layout version an email rendered from ``version`` goes in, if any."""
        email = version.parts.get("email")
        if self.layouts is None or email is None or email.get("html") is None:
            return None
        if channels is not None and "email" not in channels:
            return None
        return await self.layouts.frame(tenant_id, email.get("layout"), version.locale)

    async def preview(
        self,
        tenant_id: str,
        ref: str,
        data: dict[str, Any],
        locale: str | None,
        number: int | None,
    ) -> tuple[VersionRow, dict[str, Any]]:
        """Every part of a version rendered with ``data``: the given version (a draft
        too), or the live one for ``locale``; the same 422 a send would get."""
        await self.take_turn(tenant_id)
        template = await self.get(tenant_id, ref)
        if number is not None:
            chosen = await self.version(template, number)
        else:
            live = (await self.lookup(tenant_id, [template.id]))[template.id]
            chosen = live.choose(None if locale is None else normal_locale(locale))
        frame = await self._frame(tenant_id, chosen, None)
        return chosen, await self._render(chosen, data, None, frame)

    async def _render(
        self,
        version: VersionRow,
        data: dict[str, Any],
        channels: list[str] | None,
        frame: Frame | None = None,
    ) -> dict[str, Any]:
        try:
            size = len(orjson.dumps(data))
        except orjson.JSONEncodeError:
            raise TemplateError("data is nested too deeply") from None
        if size > self.bounds.data_bytes:
            raise TemplateError(
                f"data is over {self.bounds.data_bytes} bytes", {"limit": self.bounds.data_bytes}
            )
        layout = None if frame is None else (frame.version.cache_key, frame.version.parts["html"])
        return await self.pool.render(
            version.cache_key,
            version.parts,
            version.variables,
            data,
            channels,
            layout,
            tenant=version.tenant_id,
        )
