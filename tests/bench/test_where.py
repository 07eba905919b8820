"""``bench.where``: reading py-spy's raw samples into parts and inclusive shares. No
process is sampled here; ``python -m bench.where`` does that."""

from __future__ import annotations

import os

import pytest

from bench.where import Profile, _settings, part_of, read_raw

SITE = "/v/lib/python3.11/site-packages"
STDLIB = "/p/lib/python3.11"


def test_a_frame_belongs_to_its_homing_subpackage_its_package_or_the_stdlib() -> None:
    assert part_of("process (/w/homing/dispatch/dispatcher.py:45)") == "homing/dispatch"
    assert part_of("parse_mailbox (/w/homing/addresses.py:113)") == "homing/addresses"
    assert part_of(f"execute ({SITE}/sqlalchemy/engine/base.py:1415)") == "sqlalchemy"
    assert part_of(f"<module> ({SITE}/typing_extensions.py:3)") == "typing_extensions"
    assert part_of(f"_run_once ({STDLIB}/asyncio/base_events.py:1845)") == "asyncio"
    assert part_of(f"dumps ({STDLIB}/json/__init__.py:231)") == "stdlib"
    assert part_of("<module> (<string>:2)") == "other"


def test_raw_lines_count_own_time_by_the_innermost_frame() -> None:
    cores = {"worker": 0.8, "postgres": 0.25}
    profile = Profile("deliver", "1,000 deliveries/s", cores=cores)
    raw = "\n".join(
        [
            f'process 7:"homing worker";run (/w/homing/dispatch/worker.py:1);'
            f"execute ({SITE}/sqlalchemy/engine/base.py:2);_do ({SITE}/asyncpg/conn.py:3) 30",
            f"run (/w/homing/dispatch/worker.py:1);execute ({SITE}/sqlalchemy/engine/base.py:2) 20",
            f"run (/w/homing/dispatch/worker.py:1);send ({SITE}/aiohttp/client.py:4) 40",
            "not a sample line",
        ]
    )

    read_raw(profile, raw)

    assert profile.samples == 90
    assert profile.own == {"asyncpg": 30, "sqlalchemy": 20, "aiohttp": 40}
    assert (profile.in_sqlalchemy, profile.asyncpg_below) == (50, 30)
    first, busy, own, inclusive = profile.lines()
    assert first == "deliver: 1,000 deliveries/s; 90 samples"
    assert busy == f"  cores busy: worker 0.80, postgres 0.25; 1.05 of {os.cpu_count()} in all"
    assert own == "  own time: aiohttp 44%, asyncpg 33%, sqlalchemy 22%"
    assert inclusive == (
        "  with SQLAlchemy on the stack 56%, asyncpg below it 33%: SQLAlchemy's own 22%"
    )


def test_asyncpg_above_sqlalchemy_is_not_counted_below_it() -> None:
    profile = Profile("ingest", "1 req/s")
    read_raw(profile, f"a ({SITE}/asyncpg/pool.py:1);b ({SITE}/sqlalchemy/x.py:2) 5")

    assert (profile.in_sqlalchemy, profile.asyncpg_below) == (5, 0)


def test_no_samples_says_so_without_dividing_by_zero() -> None:
    assert Profile("slow", "0 deliveries/s").lines() == [
        "slow: 0 deliveries/s; 0 samples",
        f"  cores busy: ?; 0.00 of {os.cpu_count()} in all",
    ]


def test_worker_settings_must_be_homing_names_with_values() -> None:
    assert _settings(["HOMING_CLAIM_BATCH_SIZE=200", "HOMING_TENANT_INFLIGHT=2000"]) == {
        "HOMING_CLAIM_BATCH_SIZE": "200",
        "HOMING_TENANT_INFLIGHT": "2000",
    }
    for bad in ("PATH=/tmp", "HOMING_CLAIM_BATCH_SIZE"):
        with pytest.raises(SystemExit, match="expected HOMING_NAME=VALUE"):
            _settings([bad])
