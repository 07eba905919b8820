"""The receiver snippets of docs/webhooks.md (Python's standard library, Node's ``crypto``) accept
every format Homing sends and refuse tampered, stale and wrongly signed deliveries."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from homing.webhooks import WebhookVerificationError, generate_secret, verify
from homing.webhooks.signing import SignatureFormat, signature_headers
from tests.webhooks.receivers.node import NODE

PAGE = (Path(__file__).parents[2] / "docs" / "webhooks.md").read_text()
BODY = '{"event":"order.paid","note":"caf\u00e9"}'.encode()
Case = tuple[str, str, dict[str, str], bytes, bool]


def _block(language: str, marker: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", PAGE, flags=re.DOTALL)
    [block] = [str(b) for b in blocks if marker in b]
    return block


def _headers(
    secrets: list[str], now: float, fmt: SignatureFormat, keep: str = "all"
) -> dict[str, str]:
    headers = {k.lower(): v for k, v in signature_headers(secrets, "msg_1", now, BODY, fmt).items()}
    if keep == "x":
        return {k: v for k, v in headers.items() if k.startswith("x-webhook-")}
    return headers


def _cases() -> list[Case]:
    """(name, secret, headers, body, accepted?)"""
    new, old = generate_secret(), generate_secret()
    now = time.time()
    cases: list[Case] = []
    for fmt in SignatureFormat:
        for keep in ("all", "x"):
            name = f"{fmt.value}-{keep}"
            cases += [
                (f"{name}-genuine", new, _headers([new], now, fmt, keep), BODY, True),
                (f"{name}-tampered", new, _headers([new], now, fmt, keep), BODY + b" ", False),
                (f"{name}-stale", new, _headers([new], now - 400, fmt, keep), BODY, False),
                (f"{name}-future", new, _headers([new], now + 400, fmt, keep), BODY, False),
                (f"{name}-wrong-secret", old, _headers([new], now, fmt, keep), BODY, False),
            ]
        overlap_all = _headers([new, old], now, fmt)
        overlap_x = _headers([new, old], now, fmt, "x")
        cases += [
            (f"{fmt.value}-overlap-standard-new", new, overlap_all, BODY, True),
            (f"{fmt.value}-overlap-standard-old", old, overlap_all, BODY, True),
            (f"{fmt.value}-overlap-x-old", old, overlap_x, BODY, True),
            (f"{fmt.value}-overlap-x-new", new, overlap_x, BODY, False),
        ]
    former = _headers([new], now, SignatureFormat.NOTIFYKIT, "x")
    former["x-webhook-signature"] = former["x-webhook-signature"].split("v1=")[1]
    cases.append(("former-seconds-form", new, former, BODY, False))
    return cases


@pytest.fixture
def cases() -> list[Case]:
    # Made when the test runs, not at import: under xdist a test may start minutes after
    # collection, and "400 s in the future" must still be that when it is checked.
    return _cases()


def _check(cases: list[Case], verdicts: list[bool]) -> None:
    wrong = [
        name for (name, *_, expected), got in zip(cases, verdicts, strict=True) if got != expected
    ]
    assert not wrong, wrong


def test_the_python_snippet_accepts_every_format_and_refuses_the_rest(cases: list[Case]) -> None:
    namespace: dict[str, Any] = {}
    exec(_block("python", "def verify_homing"), namespace)
    verify_homing: Callable[[str, dict[str, str], bytes], bool] = namespace["verify_homing"]
    _check(cases, [verify_homing(secret, headers, body) for _, secret, headers, body, _ in cases])


def test_the_node_snippet_accepts_every_format_and_refuses_the_rest(
    tmp_path: Path, cases: list[Case]
) -> None:
    (tmp_path / "snippet.mjs").write_text(_block("js", "export function verifyHoming"))
    (tmp_path / "cases.json").write_text(
        json.dumps(
            [
                {"secret": s, "headers": h, "body": base64.b64encode(b).decode()}
                for _, s, h, b, _ in cases
            ]
        )
    )
    (tmp_path / "run.mjs").write_text(
        'import { readFileSync } from "node:fs";\n'
        'import { verifyHoming } from "./snippet.mjs";\n'
        "const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));\n"
        "console.log(JSON.stringify(cases.map((c) =>\n"
        "  verifyHoming(c.secret, c.headers, Buffer.from(c.body, 'base64')))));\n"
    )
    result = subprocess.run(
        [NODE, str(tmp_path / "run.mjs"), str(tmp_path / "cases.json")],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    _check(cases, json.loads(result.stdout))


def test_homings_helper_gives_the_same_verdicts(cases: list[Case]) -> None:
    verdicts = []
    for _, secret, headers, body, _ in cases:
        try:
            verify(secret, headers, body)
            verdicts.append(True)
        except WebhookVerificationError:
            verdicts.append(False)
    _check(cases, verdicts)
