"""Figures the reliability suites report (docs/reliability.md quotes the last run).

Each suite calls ``record`` with what it measured. The figures always go to the test's
output (visible with ``-s`` or on failure) and, when ``HOMING_RELIABILITY_FIGURES``
names a file, are appended to it as one JSON line each, so a CI run leaves them behind.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

FIGURES_ENV = "HOMING_RELIABILITY_FIGURES"


def record(suite: str, **figures: Any) -> None:
    """Print and (if asked) append one suite's figures."""
    line = json.dumps(
        {"suite": suite, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **figures},
        sort_keys=True,
        default=str,
    )
    print(f"[reliability] {line}", file=sys.stderr)
    path = os.environ.get(FIGURES_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
