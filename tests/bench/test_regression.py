"""The regression guard of ``python -m bench all --check``: ratios against the recorded
baseline, the band, the best of several runs, which cases to measure again, and the
checked-in baseline itself. No database or network needed."""

from __future__ import annotations

from bench import regression
from bench.report import ROWS, Figure, RowSpec, rows

HOMING = Figure("deliver/homing-postgres", 600, "deliveries/s", "Homing, PostgreSQL")
BARE = Figure("deliver/bare-c100", 2400, "deliveries/s", "bare BullMQ worker, c=100")
RSS = Figure("memory/homing-postgres", 140, "MB", "Homing worker")
PEER_RSS = Figure("memory/bullmq-c5", 140, "MB", "BullMQ seed worker, c=5")
SPECS = [
    RowSpec("deliver", HOMING.key, BARE.key),
    RowSpec("backlog: worker RSS", RSS.key, PEER_RSS.key),
]
BASELINE: dict[str, object] = {
    "band": 0.25,
    "ratios": {
        "deliver/homing-postgres ÷ deliver/bare-c100": {"ratio": 0.3},
        "memory/homing-postgres ÷ memory/bullmq-c5": {"ratio": 1.0, "lower_is_better": True},
    },
}


def _measured(*figures: Figure) -> dict[str, tuple[float, bool]]:
    return regression.ratios(rows({figure.key: figure for figure in figures}, SPECS))


def _verdicts(*figures: Figure) -> dict[str, bool]:
    return {v.key: v.ok for v in regression.judge(_measured(*figures), BASELINE)}


def test_a_ratio_within_the_band_of_its_recorded_value_passes() -> None:
    slower = Figure(HOMING.key, 2400 * 0.3 * 0.8, HOMING.unit, HOMING.label)  # 20 % down

    assert _verdicts(slower, BARE, RSS, PEER_RSS) == {
        "deliver/homing-postgres ÷ deliver/bare-c100": True,
        "memory/homing-postgres ÷ memory/bullmq-c5": True,
    }


def test_a_drop_beyond_the_band_fails() -> None:
    slower = Figure(HOMING.key, 2400 * 0.3 * 0.7, HOMING.unit, HOMING.label)  # 30 % down

    assert not _verdicts(slower, BARE)["deliver/homing-postgres ÷ deliver/bare-c100"]


def test_worker_memory_fails_when_it_grows_beyond_the_band_not_when_it_shrinks() -> None:
    grown = Figure(RSS.key, 140 * 1.3, "MB", RSS.label)
    shrunk = Figure(RSS.key, 140 * 0.5, "MB", RSS.label)

    assert not _verdicts(grown, PEER_RSS)["memory/homing-postgres ÷ memory/bullmq-c5"]
    assert _verdicts(shrunk, PEER_RSS)["memory/homing-postgres ÷ memory/bullmq-c5"]


def test_rows_this_run_did_not_measure_are_not_judged() -> None:
    assert list(_verdicts(RSS, PEER_RSS)) == ["memory/homing-postgres ÷ memory/bullmq-c5"]


def test_the_best_ratio_of_several_runs_counts() -> None:
    first = {"a ÷ b": (0.2, False), "m ÷ n": (1.4, True)}
    second = {"a ÷ b": (0.3, False), "m ÷ n": (1.1, True)}

    assert regression.best([first, second]) == {"a ÷ b": (0.3, False), "m ÷ n": (1.1, True)}


def test_a_failing_row_is_measured_again_by_the_cases_of_both_its_figures() -> None:
    assert regression.cases_of(["batch/homing-postgres ÷ batch/peer"]) == ["ingest"]
    assert regression.cases_of(["mixed-rate/homing-sqlite ÷ mixed-rate/homing-postgres"]) == [
        "mixed",
        "sqlite",
    ]
    assert regression.cases_of(["memory-rate/homing-postgres ÷ memory-rate/bullmq-c5"]) == [
        "memory"
    ]


def test_the_checked_in_baseline_names_every_paired_row_and_only_those() -> None:
    baseline = regression.load()
    paired = {f"{spec.subject} ÷ {spec.other}" for spec in ROWS}

    assert set(baseline["ratios"]) == paired  # type: ignore[arg-type]
    assert 0 < float(baseline["band"]) < 1  # type: ignore[arg-type]
    assert baseline["scale"] == "quick"
    for entry in baseline["ratios"].values():  # type: ignore[attr-defined]
        assert entry["ratio"] > 0


def test_a_row_with_its_own_band_is_judged_by_it() -> None:
    baseline = {
        "band": 0.25,
        "ratios": {"deliver/homing-postgres ÷ deliver/bare-c100": {"ratio": 0.3, "band": 0.5}},
    }
    slower = Figure(HOMING.key, 2400 * 0.3 * 0.6, HOMING.unit, HOMING.label)  # 40 % down

    [verdict] = regression.judge(_measured(slower, BARE), baseline)

    assert verdict.ok and verdict.bound == 0.3 * 0.5


def test_a_ratio_recorded_as_not_judged_is_left_out_of_the_verdicts() -> None:
    baseline = {
        "band": 0.25,
        "ratios": {
            "deliver/homing-postgres ÷ deliver/bare-c100": {"ratio": 0.3, "judged": False},
        },
    }
    slower = Figure(HOMING.key, 2400 * 0.3 * 0.1, HOMING.unit, HOMING.label)  # 90 % down

    assert regression.judge(_measured(slower, BARE), baseline) == []


def test_only_the_latency_bound_slow_row_is_not_judged() -> None:
    recorded = regression.load()["ratios"]
    unjudged = [name for name, entry in recorded.items() if entry.get("judged") is False]  # type: ignore[attr-defined]
    assert unjudged == ["slow/homing-postgres ÷ slow/bullmq-c5"]
    assert all(recorded[name].get("why") for name in unjudged)  # type: ignore[index]
