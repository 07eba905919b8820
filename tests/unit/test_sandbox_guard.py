"""A test key's job reaches a sandbox URL or nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from homing.dispatch.sandbox_guard import SandboxGuard
from homing.models import FailureClass, Job
from homing.providers.base import ProviderFailure
from tests.job_values import a_job

NOW = datetime(2026, 5, 17, tzinfo=UTC)


def _job(test: bool) -> Job:
    return a_job(created_at=NOW, updated_at=NOW, test=test)


GUARD = SandboxGuard(
    ["http://127.0.0.1:8025", "http://localhost:9000/sandbox/", "smtp://127.0.0.1:2525"]
)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8025/resend",
        "http://127.0.0.1:8025",
        "HTTP://127.0.0.1:8025/sendgrid/v3",
        "http://localhost:9000/sandbox",
        "http://LOCALHOST:9000/sandbox/postmark",
        "smtp://127.0.0.1:2525",
    ],
)
def test_sandbox_urls_are_allowed(url: str) -> None:
    assert GUARD.allows(url)
    GUARD.check(_job(test=True), "resend", url)


@pytest.mark.parametrize(
    "url",
    [
        None,
        "",
        "https://api.resend.com",
        "https://127.0.0.1:8025/resend",
        "http://127.0.0.1:8026/resend",
        "http://127.0.0.1/resend",
        "http://127.0.0.1.evil.example:8025/resend",
        "http://evil.example/?x=http://127.0.0.1:8025",
        "http://user@evil.example:8025",
        "http://localhost:9000/sandboxed",
        "http://localhost:9000/other",
        "smtp://127.0.0.1:25",
        "smtp://smtp.gmail.com:2525",
        "not a url",
    ],
)
def test_anything_else_refuses_a_test_job(url: str | None) -> None:
    assert not GUARD.allows(url)
    with pytest.raises(ProviderFailure) as refused:
        GUARD.check(_job(test=True), "resend", url)
    assert refused.value.failure_class is FailureClass.PROVIDER_PERMANENT
    assert "sandbox" in refused.value.detail


def test_a_live_job_is_never_refused() -> None:
    GUARD.check(_job(test=False), "resend", "https://api.resend.com")


def test_without_sandbox_urls_every_test_job_is_refused() -> None:
    with pytest.raises(ProviderFailure):
        SandboxGuard().check(_job(test=True), "resend", "http://127.0.0.1:8025")


def test_a_sandbox_url_needs_a_scheme_and_host() -> None:
    with pytest.raises(ValueError):
        SandboxGuard(["127.0.0.1:8025"])
