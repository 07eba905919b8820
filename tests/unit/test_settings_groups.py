"""Settings grouped by concern (homing/settings.py): the flat ``HOMING_*`` names reach
their group's field, from the environment and as keyword arguments; a group cannot be
changed in place; a bad setting is reported by its variable's name, never its value;
and the components that take a setting default to its group's default."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from homing.dispatch.policy import RetryPolicy
from homing.dispatch.worker import WorkerConfig
from homing.managers.alert_checks import Thresholds
from homing.managers.erasure import ErasureLimits
from homing.managers.templates import TemplateBounds
from homing.models import Queue
from homing.rendering.kernel import Limits
from homing.settings import (
    AlertSettings,
    ErasureSettings,
    RetrySettings,
    Settings,
    TemplateSettings,
    WorkerSettings,
    env_fields,
    explained,
)


def _homing_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.upper().startswith("HOMING_")}


def test_every_variable_names_one_field_and_groups_use_their_prefix() -> None:
    fields = env_fields()
    assert len(fields) >= 120
    assert "HOMING_TEMPLATE_MAX_SOURCE_CHARS" in fields
    assert "HOMING_MAX_PROVIDER_CALLS_PER_JOB" in fields
    assert all(name == name.upper() and name.startswith("HOMING_") for name in fields)


def test_environment_variables_reach_their_group_whatever_their_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOMING_TEMPLATE_MAX_SOURCE_CHARS", "2048")
    monkeypatch.setenv("homing_max_provider_calls_per_job", "7")
    monkeypatch.setenv("HOMING_ALERT_EMAIL", "Ops <OPS@Example.com>")
    monkeypatch.setenv("HOMING_REDIS_URL", "")  # blank: unset
    settings = Settings()
    assert settings.templates.max_source_chars == 2048
    assert settings.retries.max_provider_calls == 7
    assert settings.alerts.email == "Ops <OPS@example.com>"
    assert settings.redis.url is None


def test_flat_keyword_arguments_and_changed_are_validated() -> None:
    settings = Settings(max_attempts=5, retention_days=0, platform_email_from="")
    assert settings.retries.max_attempts == 5
    assert settings.retention.days == 0
    assert settings.platform_email.sender is None
    later = settings.changed(worker_concurrency=3)
    assert later.worker.concurrency == 3 and later.retries.max_attempts == 5
    assert settings.worker.concurrency == WorkerSettings().concurrency  # unchanged
    with pytest.raises(ValidationError):
        settings.changed(max_attempts=0)
    with pytest.raises(TypeError, match="no such setting"):
        settings.changed(max_attempt=5)


def test_a_group_cannot_be_changed_in_place() -> None:
    settings = Settings()
    with pytest.raises(ValidationError, match="frozen"):
        settings.retries.max_attempts = 9  # type: ignore[misc]


def test_a_bad_setting_is_named_by_its_variable_without_its_value() -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(metrics_port="hunter2-not-a-port", webhook_allowed_networks="10.0.0.0/33")
    lines = explained(caught.value)
    named = sorted(line.split(": ", 1)[0] for line in lines)
    assert named == ["HOMING_METRICS_PORT", "HOMING_WEBHOOK_ALLOWED_NETWORKS"]
    assert not any("hunter2" in line for line in lines)


def test_the_cli_reports_a_bad_setting_in_one_line_and_exits_2(tmp_path: Path) -> None:
    env = {
        **_homing_env(),
        "HOMING_DATA_DIR": str(tmp_path),
        "HOMING_SECRET_KEY": "hunter2-secret",
        "HOMING_MAX_ATTEMPTS": "many",
    }
    done = subprocess.run(
        [sys.executable, "-m", "homing", "migrate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("homing: HOMING_MAX_ATTEMPTS: "), done.stderr
    assert "Traceback" not in done.stderr and "hunter2" not in done.stderr


def test_components_default_to_their_groups_defaults() -> None:
    alerts, retries, templates = AlertSettings(), RetrySettings(), TemplateSettings()
    thresholds = Thresholds()
    assert thresholds.window_seconds == alerts.window_seconds
    assert thresholds.dead_letter_spike == alerts.dead_letter_spike
    policy = RetryPolicy(max_passes=1, base_seconds=1, max_seconds=1, max_deferral_seconds=1)
    assert policy.max_provider_calls == retries.max_provider_calls
    assert TemplateBounds().cache_seconds == templates.cache_seconds
    assert Limits().max_output_chars == templates.max_rendered_chars
    assert ErasureLimits().per_minute == ErasureSettings().per_minute
    config = WorkerConfig(
        queues=[Queue.EMAIL], concurrency=1, batch_size=1, lease_seconds=1, poll_seconds=1
    )
    assert config.outcome_window == WorkerSettings().outcome_window_seconds
