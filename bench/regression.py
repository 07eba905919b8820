"""The regression guard of ``python -m bench all --check``: this run's ratios against the
ones recorded in ``bench/baseline.json``.

Only ratios are compared, never absolute figures: each pairs Homing with a figure measured
minutes apart on the same machine (the BullMQ peer, or Homing on PostgreSQL for the SQLite
rows), so a slower or busier machine moves both sides. A ratio fails when it falls below
its recorded value by more than the band (for worker RSS, where lower is better, when it
rises above it); a row may carry a wider band of its own. A failing row's cases are
measured again, up to ``retries`` times, and the best ratio counts: noise rarely
repeats, a regression does.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bench.report import Row

BASELINE = Path(__file__).resolve().parent / "baseline.json"
# Where a figure comes from: the case of ``python -m bench all`` that measures it.
_CASE_OF = {
    "ingest": "ingest",
    "batch": "ingest",
    "deliver": "deliver",
    "bulk": "bulk",
    "mixed": "mixed",
    "mixed-rate": "mixed",
    "slow": "slow",
    "memory": "memory",
    "memory-rate": "memory",
}


@dataclass(frozen=True, slots=True)
class Verdict:
    key: str
    recorded: float
    measured: float
    bound: float
    lower_is_better: bool

    @property
    def ok(self) -> bool:
        if self.lower_is_better:
            return self.measured <= self.bound
        return self.measured >= self.bound

    def line(self) -> str:
        sign = "≤" if self.lower_is_better else "≥"
        verdict = "ok" if self.ok else "REGRESSION"
        return (
            f"{verdict:<10}  {self.key}: {self.measured:.2f}"
            f" (recorded {self.recorded:.2f}, needs {sign} {self.bound:.2f})"
        )


def key(row: Row) -> str:
    """The row's name in the baseline: Homing's figure over the other one."""
    assert row.other is not None
    return f"{row.subject.key} ÷ {row.other.key}"


def lower_is_better(row: Row) -> bool:
    return row.subject.unit == "MB"


def ratios(built: Iterable[Row]) -> dict[str, tuple[float, bool]]:
    """Each paired row's ratio and whether lower is better."""
    return {key(r): (r.ratio, lower_is_better(r)) for r in built if r.ratio is not None}


def best(
    runs: Iterable[Mapping[str, tuple[float, bool]]],
) -> dict[str, tuple[float, bool]]:
    """The best ratio of each row over several runs."""
    found: dict[str, tuple[float, bool]] = {}
    for run in runs:
        for name, (value, lower) in run.items():
            if name not in found:
                found[name] = (value, lower)
                continue
            kept = found[name][0]
            found[name] = (min(kept, value) if lower else max(kept, value), lower)
    return found


def load(path: Path = BASELINE) -> dict[str, object]:
    return dict(json.loads(path.read_text()))


def judge(
    measured: Mapping[str, tuple[float, bool]], baseline: Mapping[str, object]
) -> list[Verdict]:
    """One verdict per recorded ratio this run measured: within its band, or not. (A
    case that did not run is the runner's failure, reported apart.)"""
    band = float(baseline["band"])  # type: ignore[arg-type]
    recorded: Mapping[str, Mapping[str, object]] = baseline["ratios"]  # type: ignore[assignment]
    verdicts = []
    for name, entry in recorded.items():
        # Recorded but not judged: a ratio whose peer figure is bound by something other
        # than the machine (its "why" says what), so the ratio moves with the machine.
        if name not in measured or entry.get("judged") is False:
            continue
        value = float(entry["ratio"])  # type: ignore[arg-type]
        lower = bool(entry.get("lower_is_better", False))
        # A row's own band, where its runs spread wider than the file's (docs/benchmarks.md).
        own = float(entry.get("band", band))  # type: ignore[arg-type]
        bound = value * (1 + own) if lower else value * (1 - own)
        verdicts.append(Verdict(name, value, measured[name][0], bound, lower))
    return verdicts


def cases_of(names: Iterable[str]) -> list[str]:
    """The cases to run again to re-measure the rows ``names``."""
    cases: set[str] = set()
    for name in names:
        for figure in name.split(" ÷ "):
            kind, _, subject = figure.partition("/")
            cases.add("sqlite" if subject == "homing-sqlite" else _CASE_OF[kind])
    return sorted(cases)


def record(
    measured: Mapping[str, tuple[float, bool]], band: float, scale: str, machine: str, when: str
) -> None:
    """Write ``bench/baseline.json`` from this run's ratios."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=BASELINE.parent
    ).stdout.strip()
    document = {
        "recorded": when,
        "commit": commit or "?",
        "machine": machine,
        "scale": scale,
        "band": band,
        "ratios": {
            name: {"ratio": round(value, 3), **({"lower_is_better": True} if lower else {})}
            for name, (value, lower) in sorted(measured.items())
        },
    }
    BASELINE.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
