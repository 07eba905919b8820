"""axe-core in the browser tests: the pinned package (tests/browser/axe, installed with
``npm ci`` on first use) and a scan of one page.

The script goes in through ``page.evaluate`` (the DevTools protocol), not a
``<script>`` tag: the console's Content-Security-Policy allows no inline script, and
the tests see the page with the policy it is served with.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from playwright.async_api import Page

AXE_DIR = Path(__file__).resolve().parent / "axe"
SCRIPT = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
# What fails a page: axe's two worst impacts (its "moderate" and "minor" are advice).
BLOCKING = frozenset({"serious", "critical"})
# The HTML body of a message is the tenant's email in a sandboxed frame without
# script: axe cannot run in it, and its markup is the tenant's, not the console's.
_RUN = """async () => {
  const result = await axe.run(document, {iframes: false, resultTypes: ['violations']});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': ' + n.failureSummary),
  }));
}"""


@cache
def script() -> str:
    """axe.min.js of the locked axe-core, installed when missing or stale."""
    assert shutil.which("npm"), "npm is needed for the accessibility checks (.ci/run installs it)"
    lock = hashlib.sha256((AXE_DIR / "package-lock.json").read_bytes()).hexdigest()
    stamp = AXE_DIR / "node_modules" / ".homing-lock"
    # Test workers may install at the same time; one does, the others wait for it.
    with (Path(tempfile.gettempdir()) / "homing-browser-axe.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not stamp.exists() or stamp.read_text() != lock:
            argv = ["npm", "ci", "--no-audit", "--no-fund"]
            done = subprocess.run(argv, cwd=AXE_DIR, capture_output=True, text=True, check=False)
            assert done.returncode == 0, f"npm ci failed:\n{done.stderr[-2000:]}"
            stamp.write_text(lock)
    return SCRIPT.read_text(encoding="utf-8")


async def violations(page: Page) -> list[dict[str, Any]]:
    """The serious and critical accessibility violations axe finds on ``page``."""
    if not await page.evaluate("typeof axe !== 'undefined'"):
        await page.evaluate(script())
    found: list[dict[str, Any]] = await page.evaluate(_RUN)
    return [v for v in found if v["impact"] in BLOCKING]
