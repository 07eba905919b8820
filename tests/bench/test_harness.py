"""The plumbing of ``python -m bench all``: pairing, ratios, targets, the table, the
peer's command lines. No Node.js, database or network needed."""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest

from bench import common, peers, scaleout
from bench.__main__ import _cases
from bench.cases import _mixed_figures
from bench.homing_runs import Mixed, top_up
from bench.load import Load, Window
from bench.report import Figure, RowSpec, Target, amount, notes, rows, table

HOMING = Figure("deliver/homing-postgres", 1800, "deliveries/s", "Homing, PostgreSQL")
BARE = Figure("deliver/bare-c100", 3000, "deliveries/s", "bare BullMQ worker, c=100")


def _by_key(*figures: Figure) -> dict[str, Figure]:
    return {figure.key: figure for figure in figures}


def test_row_pairs_homing_with_the_peer_of_the_same_run_and_gives_the_ratio() -> None:
    spec = RowSpec("deliver", HOMING.key, BARE.key, Target(ratio_at_least=0.5))

    [row] = rows(_by_key(HOMING, BARE), [spec])

    assert row.other == BARE
    assert row.ratio == pytest.approx(0.6)
    assert (row.target, row.verdict) == ("ratio ≥ 0.5", "meets")


def test_target_with_a_bound_and_a_ratio_needs_both() -> None:
    target = Target(at_least=1000, ratio_at_least=2)

    assert target.met(1200, 2.4) is True
    assert target.met(1200, 1.5) is False
    assert target.met(900, 3.0) is False
    assert target.met(1200, None) is None


def test_memory_target_is_an_upper_bound() -> None:
    assert Target(at_most=150).met(141, None) is True
    assert Target(at_most=150).met(150, None) is True
    assert Target(at_most=150).met(151, None) is False
    assert Target(at_most=150).describe("MB") == "≤ 150 MB"


def test_row_whose_peer_was_not_measured_is_kept_without_a_ratio() -> None:
    spec = RowSpec("deliver", HOMING.key, BARE.key, Target(ratio_at_least=0.5))

    [row] = rows(_by_key(HOMING), [spec])

    assert (row.other, row.ratio, row.verdict) == (None, None, "?")


def test_rows_of_cases_not_run_are_left_out() -> None:
    assert rows(_by_key(BARE)) == []


def test_zero_peer_figure_gives_no_ratio() -> None:
    zero = Figure(BARE.key, 0, "deliveries/s", BARE.label)

    [row] = rows(_by_key(HOMING, zero), [RowSpec("deliver", HOMING.key, BARE.key)])

    assert row.ratio is None


def test_amounts_show_shares_as_percent_and_rates_with_thousands() -> None:
    assert amount(0.734, "share") == "73%"
    assert amount(181.4, "MB") == "181 MB"
    assert amount(12345.6, "msg/s") == "12,346 msg/s"


def test_table_has_a_header_and_aligned_columns() -> None:
    other = Figure("deliver/bullmq-c5", 300, "deliveries/s", "BullMQ seed worker, c=5")
    specs = [RowSpec("deliver", HOMING.key, BARE.key), RowSpec("deliver", HOMING.key, other.key)]

    lines = table(rows(_by_key(HOMING, BARE, other), specs))

    assert lines[0].split()[:2] == ["case", "Homing"]
    assert len(lines) == 3
    ratio_ends = {
        line.index(r) + len(r) for line, r in zip(lines[1:], ["0.60", "6.00"], strict=True)
    }
    assert len(ratio_ends) == 1, "ratios are right-aligned in one column"


def test_notes_name_the_figure_they_explain() -> None:
    noted = Figure(HOMING.key, 1, "deliveries/s", "Homing", "backlog emptied")

    assert notes([noted, BARE]) == [f"{HOMING.key} (Homing): backlog emptied"]


def test_top_up_keeps_a_worker_busy_for_the_whole_window() -> None:
    assert top_up(rate=1000, seconds=10, waiting=0) == 14_000
    assert top_up(rate=1000, seconds=10, waiting=20_000) == 0


def test_only_accepts_known_cases() -> None:
    assert _cases("") == ["ingest", "deliver", "mixed", "slow", "memory", "sqlite", "bulk"]
    assert _cases("deliver, slow") == ["deliver", "slow"]
    with pytest.raises(SystemExit, match="unknown case"):
        _cases("deliver,speed")


def test_peer_command_line_carries_the_queue_and_only_given_options() -> None:
    queue = peers.PeerQueue(prefix="p1", redis_url="redis://127.0.0.1:6379/12")

    argv = peers._command("serve", queue, db="postgresql://x/y", worker=False, concurrency=None)

    assert argv[2:] == [
        "serve",
        "--redis",
        "redis://127.0.0.1:6379/12",
        "--prefix",
        "p1",
        "--queue",
        "notifications-email",
        "--db",
        "postgresql://x/y",
    ]
    assert peers._command("serve", queue, worker=True)[-1] == "--worker"


def test_each_peer_queue_has_a_prefix_of_its_own() -> None:
    assert peers.PeerQueue().prefix != peers.PeerQueue().prefix


def test_peer_result_is_its_last_json_line() -> None:
    out = 'npm notice\n{"event": "ready"}\n{"completed": 5, "per_second": 2.5}\n'

    assert peers._last_json(out) == {"completed": 5, "per_second": 2.5}
    with pytest.raises(RuntimeError, match="no result"):
        peers._last_json("Error: connect ECONNREFUSED\n")


def test_a_peer_that_prints_its_result_with_its_ready_line_still_gives_its_result() -> None:
    # A no-op worker with its jobs already queued finishes at once: both lines arrive in
    # one read of the pipe, and the result sits in the reader's buffer, not in the pipe.
    script = 'echo \'{"event": "ready"}\'; echo \'{"completed": 30}\''

    with peers._running(["sh", "-c", script]) as peer:
        time.sleep(0.2)  # both lines are written before the first is read
        assert peer.wait(10) == {"completed": 30}


def test_peer_says_why_it_cannot_run_without_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda tool: None if tool == "node" else "/bin/npm")

    assert peers.unavailable() == "node not found on PATH"
    with pytest.raises(peers.PeerUnavailable, match="node not found"):
        peers.prepare()


def test_mixed_run_gives_the_share_of_draining_alone_and_says_when_it_ran_dry() -> None:
    alone, during = Window(10_000, 10.0, False), Window(6_000, 10.0, False)
    offered = Load(accepted=4_900, seconds=10.0)

    share, rate = _mixed_figures(Mixed(alone, during, offered, True), "homing-postgres", "H", 500)

    assert (share.key, share.value, share.unit) == ("mixed/homing-postgres", 0.6, "share")
    assert (rate.key, rate.value) == ("mixed-rate/homing-postgres", 600)
    assert "accepted 490 of 500 req/s offered" in share.note
    assert "ran dry" in share.note


def test_record_appends_a_dated_section_with_the_machine_and_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "benchmarks.md").write_text("# Benchmarks\n")
    monkeypatch.setattr(common, "ROOT", tmp_path)

    common.append_section("all", "python -m bench all --record", ["a  b"], versions="Node 20.1")

    text = (tmp_path / "docs" / "benchmarks.md").read_text()
    assert text.startswith("# Benchmarks\n\n### all — ")
    assert "cores" in text
    assert "Node 20.1. Command: `python -m bench all --record`." in text
    assert "```\na  b\n```" in text


def test_record_puts_the_new_section_at_the_top_of_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "docs" / "benchmarks.md"
    page.parent.mkdir()
    top = "# Benchmarks\n\n## Current figures\n\n## History\n\nNewest first.\n\n"
    page.write_text(top + "### old — 2026-01-01\n\nold\n")
    monkeypatch.setattr(common, "ROOT", tmp_path)

    common.append_section("deliver", "python -m bench.deliver --record", ["fast"])

    text = page.read_text()
    assert text.startswith(top + "### deliver — ")
    assert text.index("### deliver — ") < text.index("### old — 2026-01-01")
    assert text.endswith("```\nfast\n```\n\n### old — 2026-01-01\n\nold\n")


def test_comparisons_without_their_peer_collapse_into_one_row() -> None:
    specs = [RowSpec("deliver", HOMING.key, BARE.key), RowSpec("deliver", HOMING.key, "x/y")]

    assert len(rows(_by_key(HOMING), specs)) == 1
    assert len(rows(_by_key(HOMING, BARE), specs)) == 2


def test_cpu_is_read_from_proc_and_scaleout_says_each_part() -> None:
    spent = common.cpu_seconds([os.getpid()])
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    assert common.cpu_seconds([os.getpid()]) > spent
    assert common.cpu_seconds([2**22 + 1]) == 0  # a process gone counts nothing
    run = scaleout.Run(2, 300.0, Counter({"IO": 3, "running": 1}), {"postgres": 0.5}, 4096)
    line = scaleout._line(run, 200.0)
    assert "300 deliveries/s (1.50x one)" in line
    assert "postgres 0.50" in line and "WAL 4.0 KiB/delivery" in line
    assert "IO 75%, running 25%" in line
