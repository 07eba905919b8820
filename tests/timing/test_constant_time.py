"""Every comparison of a secret or a signature is constant-time
(docs/architecture.md, "Secrets").

A plain ``==`` on a secret leaks, through its timing, how many leading bytes matched.
This inspects the source of every module on the paths where Homing compares secrets
or signatures, and fails on any ``==``/``!=`` whose operands are named like a secret
(secret, signature, token, password, digest, mac, hash, api key, credential, or the
verifier's expected/given/offered values) unless the comparison is reviewed below.
SQLAlchemy column expressions (``table.c.key_hash == digest``) are not Python
comparisons: the database looks the value up through an index, so they are skipped.
Each verifier must also reach ``hmac.compare_digest`` itself or through a library that
does.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import standardwebhooks.webhooks

ROOT = Path(__file__).resolve().parents[2]
SCOPE = [
    "homing/crypto.py",
    "homing/managers/admission.py",
    "homing/api/middleware/admin_guard.py",
    "homing/api/middleware/sending_gate.py",
    "homing/api/deps.py",
    "homing/api/routes/inbound.py",
    "homing/inbound/secrets.py",
    "homing/inbound/verification.py",
    "homing/inbound/billing/*.py",
    "homing/vendors/*/verify.py",
    "homing/store/keys.py",
    "homing/store/tenants.py",
    "homing/store/inbound_secrets.py",
    "homing/webhooks/*.py",
    "homing/managers/webhook_secrets.py",
]
SECRET_NAME = re.compile(
    r"secret|signature|\bsig\b|token|passw|digest|\bmac\b|hmac|hash|api_?key|credential"
    r"|expected|offered|given|candidate",
    re.IGNORECASE,
)
# (file, comparison as ast.unparse prints it) -> why it is not a secret comparison.
REVIEWED: dict[tuple[str, str], str] = {
    ("homing/managers/admission.py", "p.api_key_id == key_id"): "a key's id, public, not the key",
    ("homing/inbound/secrets.py", "set(given) != {kind}"): "the names of the fields given",
    (
        "homing/managers/webhook_secrets.py",
        "await self._store.delete_secrets(tenant_id, audit) == 0",
    ): ("a row count"),
}
# Modules that compare a secret themselves, and what they must call to do it.
CONSTANT_TIME_CALLERS = {
    "homing/crypto.py": "compare_digest",
    "homing/api/middleware/admin_guard.py": "constant_time_equals",
    "homing/vendors/mailgun/verify.py": "compare_digest",
    "homing/inbound/billing/paystack.py": "compare_digest",
    "homing/vendors/postmark/verify.py": "compare_digest",
    "homing/webhooks/verify.py": "compare_digest",
}


def _files() -> list[Path]:
    found = sorted({p for pattern in SCOPE for p in ROOT.glob(pattern)})
    assert len(found) >= 15, found
    return found


def _names(node: ast.AST) -> list[str]:
    found = []
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.append(child.id)
        elif isinstance(child, ast.Attribute):
            found.append(child.attr)
    return found


def _is_column(node: ast.AST) -> bool:
    """``table.c.name``: a SQLAlchemy column, so the comparison builds SQL."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "c"
    )


def flagged_comparisons(source: str) -> list[tuple[int, str]]:
    """(line, source) of each ``==``/``!=`` between operands named like secrets."""
    flagged = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        if not any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            continue
        operands = [node.left, *node.comparators]
        if any(_is_column(operand) for operand in operands):
            continue
        if any(SECRET_NAME.search(name) for name in _names(node)):
            flagged.append((node.lineno, ast.unparse(node)))
    return flagged


def test_the_detector_catches_a_plain_comparison_of_a_secret() -> None:
    source = "def check(given, expected_signature):\n    return given == expected_signature\n"
    assert flagged_comparisons(source) == [(2, "given == expected_signature")]
    safe = "import hmac\ndef check(a, b):\n    return hmac.compare_digest(a, b)\n"
    assert flagged_comparisons(safe) == []


def test_no_secret_or_signature_is_compared_with_a_plain_operator() -> None:
    unreviewed, seen = [], set()
    for path in _files():
        relative = path.relative_to(ROOT).as_posix()
        for line, text in flagged_comparisons(path.read_text()):
            seen.add((relative, text))
            if (relative, text) not in REVIEWED:
                unreviewed.append(f"{relative}:{line}: {text}")
    assert not unreviewed, (
        "compare secrets and signatures with hmac.compare_digest (or "
        "homing.crypto.constant_time_equals); if this is not a secret, add it to "
        "REVIEWED with the reason:\n" + "\n".join(unreviewed)
    )
    stale = sorted(set(REVIEWED) - seen)
    assert not stale, f"REVIEWED entries that no longer match any code: {stale}"


def test_every_verifier_compares_in_constant_time() -> None:
    for relative, call in CONSTANT_TIME_CALLERS.items():
        tree = ast.parse((ROOT / relative).read_text())
        calls = {
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
        }
        assert call in calls, f"{relative} compares a secret without {call}()"
    # Resend (Svix) and Polar verify through standardwebhooks: it must compare safely too.
    assert "hmac.compare_digest" in inspect.getsource(standardwebhooks.webhooks.Webhook.verify)
