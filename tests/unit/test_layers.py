"""The import rules of docs/architecture.md ("Layers"), read from the code with ``ast``.

Every module of ``homing/`` belongs to one layer; a layer imports only the layers the
table allows. Imports inside functions count (a lazy import is still a dependency), and
so do ``TYPE_CHECKING`` imports (a type is a dependency too), for the layer rules and for
the cycle check alike: a cycle that only type checking sees is still two modules that
cannot be read apart.
"""

from __future__ import annotations

import ast
import collections
import functools
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import homing
from homing.inbound.intake import Intake
from homing.managers.webhook_channel import WebhookChannel
from homing.services import Services

ROOT = Path(homing.__file__).resolve().parent
KERNEL = frozenset(
    {
        "settings",
        "errors",
        "channels",
        "models",
        "clock",
        "crypto",
        "logs",
        "addresses",
        "email_headers",
        "hosts",
        "ratelimit",
        "alerts",
        "metrics",
        "tracing",
        # The domain's plain types, one module per resource (docs/architecture.md, "Layers").
        "domain",
        # The vendor descriptors: data every layer reads (docs/architecture.md, "Vendors").
        "vendors",
    }
)
FOLDERS = frozenset(
    {
        "webhooks",
        "store",
        "timing",
        "providers",
        "inbound",
        "managers",
        "dispatch",
        "api",
        "console",
        "sandbox",
        "migrations",
        "cli",
        "rendering",
    }
)
EVERY = frozenset({*FOLDERS - {"cli"}, "kernel", "services", "entry"})

# docs/architecture.md, "Layers": what each layer may import besides itself.
ALLOWED: dict[str, frozenset[str]] = {
    "kernel": frozenset(),
    "webhooks": frozenset({"kernel"}),
    "store": frozenset({"kernel"}),
    "timing": frozenset({"kernel", "store"}),
    "providers": frozenset({"kernel", "webhooks"}),
    "inbound": frozenset({"kernel", "store", "webhooks"}),
    "managers": frozenset({"kernel", "store", "timing", "providers", "webhooks", "rendering"}),
    "dispatch": frozenset({"kernel", "store", "timing", "providers", "webhooks"}),
    "api": frozenset(
        {
            "kernel",
            "webhooks",
            "store",
            "timing",
            "inbound",
            "managers",
            "services",
            "console",
            "rendering",
        }
    ),
    # The web console: what the API may use (not the API itself, which installs it).
    "console": frozenset(
        {"kernel", "webhooks", "store", "timing", "inbound", "managers", "services"}
    ),
    "services": EVERY - {"services", "api", "console", "entry", "sandbox", "migrations"},
    "entry": EVERY - {"entry"},
    "sandbox": frozenset({"kernel"}),
    # Templates rendered in worker processes (docs/templates.md).
    "rendering": frozenset({"kernel"}),
    "migrations": frozenset({"kernel", "store"}),
}

# A vendor's own folder (homing/vendors/<name>/): its __init__ is the descriptor
# (kernel); each other file is the vendor's face in one layer, belongs to that layer
# and keeps its rules (docs/architecture.md, "Adding a vendor").
VENDOR_HOMES = "vendors"
VENDOR_FACES: dict[str, str] = {"adapter": "providers", "verify": "inbound", "parse": "inbound"}
# Folders whose files are one layer's face of one resource (domain/feed.py, store/feed.py,
# routes/feed.py).
RESOURCE_FOLDERS = frozenset(
    {"domain", "store", "store/tables", "api/routes", "api/schemas", "managers"}
)
# The HTTP mapping of the kernel's error tree (STYLE names both files).
FACES = frozenset({"homing/errors.py", "homing/api/errors.py"})


@dataclass(frozen=True)
class Import:
    """One ``homing`` import of one module: where it is and what it names."""

    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{path_of(self.source)}:{self.line} imports {self.target}"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def path_of(module: str) -> str:
    return str(MODULES[module].relative_to(ROOT.parent))


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) == 4 and parts[1] == VENDOR_HOMES and parts[3] in VENDOR_FACES:
        return VENDOR_FACES[parts[3]]
    if len(parts) == 1 or parts[1] in KERNEL:
        return "kernel"
    if parts[1] == "services":
        return "services"
    if parts[1] in ("__main__", "cli"):
        return "entry"
    return parts[1] if parts[1] in FOLDERS else None


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if MODULES[module].name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(module: str) -> Iterator[Import]:
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parent = _resolve(module, node)
            # ``from homing.x import y`` names the module homing.x.y when there is one.
            names = [
                f"{parent}.{a.name}" if f"{parent}.{a.name}" in MODULES else parent
                for a in node.names
            ]
        else:
            continue
        for name in names:
            if name == "homing" or name.startswith("homing."):
                yield Import(module, name, node.lineno)


IMPORTS: list[Import] = sorted(
    {imp for module in MODULES for imp in imports_of(module)},
    key=lambda imp: (imp.source, imp.line, imp.target),
)


def test_every_module_belongs_to_a_layer() -> None:
    loose = [path_of(m) for m in MODULES if layer_of(m) is None]
    assert not loose, f"modules outside every layer of docs/architecture.md: {loose}"


def test_the_layer_table_has_no_cycle() -> None:
    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in ALLOWED[start] - seen:
            if nxt == goal or reaches(nxt, goal, seen | {nxt}):
                return True
        return False

    cyclic = [layer for layer in ALLOWED if reaches(layer, layer, set())]
    assert not cyclic, f"layers that may import themselves through others: {cyclic}"


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_the_layers_it_may(layer: str) -> None:
    allowed = ALLOWED[layer] | {layer}
    wrong = [
        f"{imp} ({layer} -> {layer_of(imp.target)})"
        for imp in IMPORTS
        if layer_of(imp.source) == layer and layer_of(imp.target) not in allowed
    ]
    may = ", ".join(sorted(ALLOWED[layer])) or "nothing but itself"
    assert not wrong, f"{layer} may import {may}; found:\n  " + "\n  ".join(wrong)


def test_migration_revisions_import_no_application_code() -> None:
    # A revision runs against databases made long ago: the code it would import changes.
    # Only the migrations' own frozen copies (homing.migrations.types) may be imported.
    wrong = [
        str(imp)
        for imp in IMPORTS
        if imp.source.startswith("homing.migrations.versions")
        and not imp.target.startswith("homing.migrations.")
    ]
    assert not wrong, "migration revisions must copy what they need:\n  " + "\n  ".join(wrong)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for child in sorted(edges[node]):
            if child not in index:
                visit(child)
                low[node] = min(low[node], low[child])
            elif child in stack:
                low[node] = min(low[node], index[child])
        if low[node] == index[node]:
            component = stack[stack.index(node) :]
            del stack[stack.index(node) :]
            if len(component) > 1:
                found.append(sorted(component))

    for root in sorted(edges):
        if root not in index:
            visit(root)
    return found


def test_no_import_cycles_between_modules() -> None:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    where: dict[tuple[str, str], Import] = {}
    for imp in IMPORTS:
        # A package's __init__ re-exporting its own modules is no cycle of design.
        inner = imp.target.startswith(imp.source + ".") or imp.source.startswith(imp.target + ".")
        if imp.target in MODULES and imp.target != imp.source and not inner:
            edges[imp.source].add(imp.target)
            where.setdefault((imp.source, imp.target), imp)
    described = []
    for component in _cycles(edges):
        members = set(component)
        links = [str(where[(a, b)]) for a in component for b in sorted(edges[a] & members)]
        described.append("cycle: " + "; ".join(links))
    assert not described, "\n".join(described)


def _faces(paths: list[Path]) -> bool:
    """Each file is one layer's face of one resource (``store/jobs.py``,
    ``api/routes/jobs.py``, ``api/schemas/jobs.py``: the API has two faces of a
    resource, its routes and its bodies, one folder each). A vendor's faces are in its
    own folder (``vendors/<name>/``), which names them."""
    folders = [p.parent for p in paths]
    layers = [layer_of(module_name(p)) for p in paths]
    relative = [p.relative_to(ROOT.parent).as_posix() for p in paths]
    faces = all(
        p.parent.relative_to(ROOT).as_posix() in RESOURCE_FOLDERS or r in FACES
        for p, r in zip(paths, relative, strict=True)
    )
    return faces and len(set(zip(layers, folders, strict=True))) == len(layers)


def _in_vendor_home(path: Path) -> bool:
    parts = path.relative_to(ROOT).parts
    return len(parts) == 3 and parts[0] == VENDOR_HOMES and parts[2][:-3] in VENDOR_FACES


def test_a_vendors_folder_holds_only_its_descriptor_and_faces() -> None:
    homes = [p for p in (ROOT / VENDOR_HOMES).iterdir() if p.is_dir() and p.name != "__pycache__"]
    stray = [
        str(f.relative_to(ROOT.parent))
        for home in homes
        for f in home.glob("*.py")
        if f.name != "__init__.py" and f.stem not in VENDOR_FACES
    ]
    assert not stray, f"a vendor's folder holds its descriptor and {sorted(VENDOR_FACES)}: {stray}"


def test_module_names_are_unique() -> None:
    by_name: dict[str, list[Path]] = collections.defaultdict(list)
    for path in MODULES.values():
        # The sandbox is a program of its own (an emulator): its names are its own.
        skip = {"migrations", "sandbox"} & set(path.relative_to(ROOT).parts)
        # A vendor's folder names its faces: vendors/vonage/adapter.py says both things.
        if path.name != "__init__.py" and not skip and not _in_vendor_home(path):
            by_name[path.name].append(path)
    clashes = []
    for name, paths in sorted(by_name.items()):
        if len(paths) > 1 and not _faces(paths):
            clashes.append(f"{name}: " + ", ".join(str(p.relative_to(ROOT.parent)) for p in paths))
    assert not clashes, "module names that say two things:\n  " + "\n  ".join(clashes)


# docs/architecture.md, "Layers": a route calls a manager, the manager the store. The
# modules of the routes and the pages, and the ``Services`` attributes they may still
# use as stores, each with its reason. A route that reaches a store not listed here
# fails ``test_routes_reach_stores_only_through_managers``: give the rule a manager, or
# add the pair with why no manager has anything to decide.
ROUTE_FOLDERS = ("api/routes", "console")
# What the routes below may read or change without a manager, and why.
READ = "a plain read, scoped by the tenant id the principal carries: nothing to decide"
OPERATOR = "the operator's read across tenants (admin key or operator session): no tenant rule"
AUDITED = (
    "audited changes: the route builds the event with the AuditLog manager and the store"
    " writes it in the change's own transaction, which refuses a suspended tenant"
    " (store/audit.py, write_event): a manager would pass the call through"
)
# The accept paths belong to issue 23's hot-path work (store/accepting.py, admission).
ROUTING = (
    "the accept reads the tenant's providers once to pick a route; what is accepted,"
    " and how much, is Admission's, called next"
)
DIRECT_STORE_USES: dict[tuple[str, str], str] = {
    ("homing/api/routes/admin_jobs.py", "jobs"): OPERATOR + " (jobs, queue depths)",
    ("homing/api/routes/batch.py", "providers"): ROUTING,
    ("homing/api/routes/chat.py", "providers"): ROUTING,
    ("homing/api/routes/dead_letters.py", "dead_letter_store"): (
        READ + " (redrive and purge go through DeadLetters)"
    ),
    ("homing/api/routes/dead_letters.py", "jobs"): READ + " (the job a dead letter names)",
    ("homing/api/routes/health.py", "db"): "/healthz: a ping of the database, no domain rule",
    ("homing/api/routes/jobs.py", "jobs"): (
        READ + "; cancel is one conditional update (a PENDING job no worker holds, tenant"
        " and test scoped in its WHERE), which writes no audit event"
    ),
    ("homing/api/routes/keys.py", "keys"): AUDITED + "; the list is a plain read",
    ("homing/api/routes/email.py", "providers"): ROUTING,
    ("homing/api/routes/providers.py", "providers"): (
        AUDITED + "; registering and rechecking go through ProviderAccounts"
    ),
    ("homing/api/routes/sms.py", "providers"): ROUTING,
    ("homing/api/routes/suppressions.py", "suppressions"): (AUDITED + "; the list is a plain read"),
    ("homing/api/routes/webhooks.py", "webhooks.store"): (
        AUDITED + " (re-enabling a gone endpoint); the list is a plain read"
    ),
    ("homing/console/health_pages.py", "provider_health"): OPERATOR + " (health counts)",
    ("homing/console/health_pages.py", "signals"): OPERATOR + " (alert signals)",
    ("homing/console/key_pages.py", "keys"): AUDITED + "; the list is a plain read",
    ("homing/console/dead_letter_pages.py", "dead_letter_store"): (
        READ + " (redrive and purge go through DeadLetters)"
    ),
    ("homing/console/operator_dead_letter_pages.py", "dead_letter_store"): OPERATOR
    + " (dead letters)",
    ("homing/console/operator_dead_letter_pages.py", "tenants"): (
        OPERATOR + " (whether the tenant id a filter names exists)"
    ),
    ("homing/console/operator_pages.py", "jobs"): OPERATOR + " (queue depths)",
    ("homing/console/inbound_secret_pages.py", "providers"): (
        READ + " (the account whose secret is set; InboundSecrets checks it again)"
    ),
    ("homing/console/pacing_pages.py", "providers"): AUDITED + "; the page reads the account",
    ("homing/console/provider_pages.py", "providers"): AUDITED + "; the pages read the accounts",
    (
        "homing/console/domain_pages.py",
        "providers",
    ): AUDITED + "; the page reads the email accounts a domain may be verified through",
    ("homing/console/provider_setup.py", "providers"): (
        AUDITED + "; registering goes through ProviderAccounts"
    ),
    ("homing/console/send_test_pages.py", "providers"): (
        ROUTING + "; the page shows which channels have an enabled provider"
    ),
    ("homing/console/suppression_pages.py", "suppressions"): (
        AUDITED + "; the list is a plain read"
    ),
    ("homing/console/tenant_pages.py", "jobs"): READ,
    ("homing/console/tenant_pages.py", "volume"): READ + " (the dashboard's daily counts)",
    ("homing/console/user_pages.py", "members"): (
        AUDITED + "; the list is a plain read (invitations go through Invitations)"
    ),
    ("homing/console/webhook_pages.py", "jobs"): READ + " (the webhook deliveries)",
    ("homing/console/webhook_pages.py", "webhooks.store"): (
        AUDITED + " (re-enabling a gone endpoint); the list is a plain read"
    ),
}


def _attributes(cls: type) -> dict[str, object]:
    """The types of ``cls``'s fields and (cached) properties, by name."""
    found: dict[str, object] = dict(typing.get_type_hints(cls))
    for name, value in vars(cls).items():
        if isinstance(value, functools.cached_property):
            found[name] = typing.get_type_hints(value.func).get("return")
        elif isinstance(value, property) and value.fget is not None:
            found[name] = typing.get_type_hints(value.fget).get("return")
    return found


def _is_store(kind: object) -> bool:
    return isinstance(kind, type) and kind.__module__.startswith("homing.store.")


# Parts of ``Services`` that bundle one part of the system: their stores count too.
BUNDLES: frozenset[type] = frozenset({Intake, WebhookChannel})


def _stores_of_services() -> set[str]:
    """The ``Services`` paths (``jobs``, ``suppressions``) that are stores."""
    stores: set[str] = set()
    for name, kind in _attributes(Services).items():
        if _is_store(kind):
            stores.add(name)
        elif isinstance(kind, type) and kind in BUNDLES:
            # A bundle of one part of the system (Intake, WebhookChannel): its stores too.
            stores |= {f"{name}.{inner}" for inner, k in _attributes(kind).items() if _is_store(k)}
    return stores


def _chain(node: ast.Attribute) -> list[str]:
    """``services.domains.add`` as ``["services", "inbound", "domains", "add"]``."""
    names: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        names.append(current.attr)
        current = current.value
    if isinstance(current, ast.Name):
        names.append(current.id)
    return names[::-1]


def direct_store_uses() -> dict[tuple[str, str], list[int]]:
    """Each (module, store) pair of a route or page that uses a store of ``services``
    directly, with the lines that do."""
    stores = _stores_of_services()
    found: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for module, path in MODULES.items():
        if path.parent.relative_to(ROOT).as_posix() not in ROUTE_FOLDERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            chain = _chain(node) if isinstance(node, ast.Attribute) else []
            if not chain or chain[0] != "services":
                continue
            # The longest path that names a store: ``suppressions``, ``jobs``.
            for length in (2, 1):
                store = ".".join(chain[1 : 1 + length])
                if len(chain) > length and store in stores:
                    found[(path_of(module), store)].append(node.lineno)
                    break
    return {pair: sorted(set(lines)) for pair, lines in found.items()}


def test_routes_reach_stores_only_through_managers() -> None:
    uses = direct_store_uses()
    unlisted = [
        f"{module}:{lines[0]} uses services.{store}"
        for (module, store), lines in sorted(uses.items())
        if (module, store) not in DIRECT_STORE_USES
    ]
    assert not unlisted, (
        "routes and pages reach stores through managers (docs/architecture.md, "
        '"Layers"); route these through the manager that owns the rule, or list them '
        "in DIRECT_STORE_USES with the reason no manager has anything to decide:\n  "
        + "\n  ".join(unlisted)
    )


def test_every_listed_direct_store_use_is_still_made() -> None:
    # An exception the code no longer needs is one a later change could use unseen.
    stale = sorted(set(DIRECT_STORE_USES) - set(direct_store_uses()))
    assert not stale, f"DIRECT_STORE_USES lists pairs the code no longer has: {stale}"


def test_every_direct_store_use_has_a_reason() -> None:
    assert all(reason.strip() for reason in DIRECT_STORE_USES.values())
