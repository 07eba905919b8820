"""The kernel's metric helpers, one counter moved at a time, and the pieces of the
multiprocess scrape: the private directory of ``homing run``, a dead child's gauges,
the optional scrape token."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import REGISTRY, generate_latest

from homing.__main__ import MULTIPROC_ENV, shared_metrics_dir
from homing.api.refusals import channel_of
from homing.api.scrape import check_token, registry
from homing.channels import Channel
from homing.cli.supervisor import ChildProcesses
from homing.dispatch.passes import count_call
from homing.errors import (
    HomingError,
    IdempotencyConflict,
    QuotaExceeded,
    RateLimited,
    TenantSuspended,
    Unauthenticated,
    UnknownProvider,
)
from homing.metrics import bounded, refusal_reason
from homing.models import FailureClass, Job, ProviderAccount
from homing.providers.base import ProviderFailure
from tests.job_values import a_job
from tests.metrics_helpers import Moves

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _scrape() -> str:
    return generate_latest(REGISTRY).decode()


def test_a_label_value_outside_its_set_reads_other() -> None:
    assert bounded("sendgrid", {"sendgrid", "ses"}) == "sendgrid"
    assert bounded("sendgrid\n# HELP evil", {"sendgrid"}) == "other"


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (RateLimited(), "rate_limited"),
        (QuotaExceeded(), "quota"),
        (TenantSuspended(), "suspended"),
        (Unauthenticated(), "unauthenticated"),
        (IdempotencyConflict(), "conflict"),
        (UnknownProvider(), "invalid"),
        (None, "invalid"),
        (HomingError(), "other"),
    ],
)
def test_every_refusal_has_one_reason_from_a_fixed_set(
    error: HomingError | None, reason: str
) -> None:
    assert refusal_reason(error) == reason


def test_the_channel_label_comes_from_the_sending_path_bounded() -> None:
    assert channel_of("/v1/notifications/email") == "email"
    assert channel_of("/v1/notifications/webhook/batch") == "webhook"
    assert channel_of("/v1/notifications/ada@example.com") == "other"
    assert channel_of("/v1/jobs/j_1/retry") is None


def _job(channel: Channel = Channel.EMAIL) -> Job:
    return a_job(
        id="j_1", tenant_id="t_secret_tenant", channel=channel, created_at=NOW, updated_at=NOW
    )


def _account(provider: str) -> ProviderAccount:
    return ProviderAccount(
        id="pa_account_id",
        tenant_id="t_secret_tenant",
        channel=Channel.EMAIL,
        vendor=provider,
        priority=1,
        enabled=True,
        credentials_sealed="",
        credentials_preview="",
        config={},
        created_at=NOW,
    )


def test_a_provider_call_moves_its_counter_and_histogram_by_kind_not_account() -> None:
    before = _scrape()
    count_call(_job(), _account("sendgrid"), None, 0.03)
    failure = ProviderFailure(FailureClass.TRANSIENT, "503")
    count_call(_job(), _account("sendgrid"), failure, 0.2)
    count_call(_job(), _account("made-up-kind"), failure, 0.2)
    after = _scrape()
    moves = Moves(before, after)
    call = {"channel": "email", "provider": "sendgrid"}
    calls = "homing_provider_calls_total"
    assert moves.moved(calls, **call, outcome="success") == 1
    assert moves.moved(calls, **call, outcome="transient") == 1
    assert moves.moved(calls, channel="email", provider="other", outcome="transient") == 1
    assert moves.moved("homing_provider_call_seconds_count", **call) == 2
    assert moves.moved("homing_provider_call_seconds_bucket", **call, le="0.05") == 1
    assert moves.moved("homing_provider_call_seconds_sum", **call) == pytest.approx(0.23)
    assert "pa_account_id" not in after and "t_secret_tenant" not in after


def test_without_a_token_every_scrape_is_let_in() -> None:
    check_token(None, None)


def test_with_a_token_only_its_bearer_scrapes() -> None:
    check_token("s3cret", "Bearer s3cret")
    check_token("s3cret", "bearer s3cret")
    for wrong in (None, "", "Bearer", "Bearer s3cre", "Basic s3cret", "Bearer " + "x" * 10_000):
        with pytest.raises(Unauthenticated) as refused:
            check_token("s3cret", wrong)
        assert "s3cret" not in str(refused.value.message)


def test_without_the_multiprocess_directory_the_scrape_is_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(MULTIPROC_ENV, raising=False)
    assert registry() is REGISTRY


@pytest.mark.parametrize("argv", [["run"], ["run", "--demo"], ["api", "--port", "9"]])
def test_run_and_api_get_a_fresh_private_metrics_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str]
) -> None:
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / "counter_1.db").write_bytes(b"old")
    monkeypatch.setenv(MULTIPROC_ENV, str(stale))
    directory = shared_metrics_dir(argv)
    assert directory is not None
    try:
        assert os.environ[MULTIPROC_ENV] == directory != str(stale)
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
        assert os.listdir(directory) == []
    finally:
        os.rmdir(directory)


@pytest.mark.parametrize("argv", [[], ["worker"], ["api", "--joined"], ["dlq", "list"]])
def test_other_commands_and_children_keep_the_environment(
    monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    monkeypatch.setenv(MULTIPROC_ENV, "/inherited")
    assert shared_metrics_dir(argv) is None
    assert os.environ[MULTIPROC_ENV] == "/inherited"


def test_a_dead_childs_live_gauges_leave_the_scrape_but_its_counters_stay(
    tmp_path: Path,
) -> None:
    for name in ("gauge_livesum_4242.db", "counter_4242.db", "gauge_livesum_7.db"):
        (tmp_path / name).write_bytes(b"")
    children = ChildProcesses("worker", ["worker"], 0, {MULTIPROC_ENV: str(tmp_path)})
    children._forget_metrics(4242)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counter_4242.db", "gauge_livesum_7.db"]
