"""The figures of ``python -m bench all``: how pairs compare, the targets, the table.

Every case yields ``Figure``s keyed ``case/subject`` (``deliver/homing-postgres``,
``deliver/bullmq-c5``). ``ROWS`` pairs Homing's figure with the one it is judged
against, measured in the same run, so that machine noise mostly cancels in the ratio.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Figure:
    key: str
    value: float
    unit: str
    label: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class Target:
    """What the issue asks of Homing's figure: bounds, and a least ratio to the other."""

    at_least: float | None = None
    at_most: float | None = None
    ratio_at_least: float | None = None

    def describe(self, unit: str) -> str:
        parts = []
        if self.at_least is not None:
            parts.append(f"≥ {amount(self.at_least, unit)}")
        if self.at_most is not None:
            parts.append(f"≤ {amount(self.at_most, unit)}")
        if self.ratio_at_least is not None:
            parts.append(f"ratio ≥ {self.ratio_at_least:g}")
        return ", ".join(parts)

    def met(self, value: float, ratio: float | None) -> bool | None:
        """Whether ``value`` (and ``ratio``) meet the target; None when it cannot tell."""
        if self.ratio_at_least is not None and ratio is None:
            return None
        return (
            (self.at_least is None or value >= self.at_least)
            and (self.at_most is None or value <= self.at_most)
            and (self.ratio_at_least is None or (ratio or 0) >= self.ratio_at_least)
        )


@dataclass(frozen=True, slots=True)
class RowSpec:
    case: str
    subject: str
    other: str
    target: Target | None = None


@dataclass(frozen=True, slots=True)
class Row:
    case: str
    subject: Figure
    other: Figure | None
    ratio: float | None
    target: str
    verdict: str


_PG, _LITE = "homing-postgres", "homing-sqlite"
_HALF = Target(ratio_at_least=0.5)
# Issue #24's targets: each ratio is Homing's figure over the peer's of the same run.
_PAR = Target(ratio_at_least=1)
ROWS: tuple[RowSpec, ...] = (
    RowSpec("ingest, 64 clients", f"ingest/{_PG}", "ingest/peer", _PAR),
    RowSpec("batch ingest", f"batch/{_PG}", "batch/peer", _PAR),
    RowSpec("deliver, no latency", f"deliver/{_PG}", "deliver/bullmq-c5"),
    RowSpec("deliver, no latency", f"deliver/{_PG}", "deliver/bullmq-c100"),
    RowSpec("deliver, no latency", f"deliver/{_PG}", "deliver/bare-c100", _PAR),
    RowSpec("deliver, no latency", f"deliver/{_PG}", "deliver/noop-c100"),
    RowSpec("deliver while ingesting ÷ alone", f"mixed/{_PG}", "mixed/bullmq-c5", Target(0.9)),
    RowSpec("deliver while ingesting ÷ alone", f"mixed/{_PG}", "mixed/bullmq-c100", Target(0.9)),
    RowSpec("deliver while ingesting", f"mixed-rate/{_PG}", "mixed-rate/bullmq-c5"),
    RowSpec("deliver while ingesting", f"mixed-rate/{_PG}", "mixed-rate/bullmq-c100"),
    RowSpec("slow provider, 200 ms", f"slow/{_PG}", "slow/bullmq-c5"),
    RowSpec("slow provider, 200 ms", f"slow/{_PG}", "slow/bullmq-c100", Target(ratio_at_least=2)),
    RowSpec("backlog: worker RSS", f"memory/{_PG}", "memory/bullmq-c5", Target(at_most=150)),
    RowSpec("backlog: deliveries", f"memory-rate/{_PG}", "memory-rate/bullmq-c5"),
    RowSpec("SQLite: ingest", f"ingest/{_LITE}", f"ingest/{_PG}", _HALF),
    RowSpec("SQLite: batch ingest", f"batch/{_LITE}", f"batch/{_PG}", _HALF),
    RowSpec("SQLite: deliver, no latency", f"deliver/{_LITE}", f"deliver/{_PG}", _HALF),
    RowSpec("SQLite: deliver while ingesting", f"mixed-rate/{_LITE}", f"mixed-rate/{_PG}", _HALF),
    RowSpec("SQLite: while ingesting ÷ alone", f"mixed/{_LITE}", f"mixed/{_PG}", _HALF),
    RowSpec("SQLite: slow provider, 200 ms", f"slow/{_LITE}", f"slow/{_PG}", _HALF),
)


# Rows in the table that bench/baseline.json does not record yet (``--check`` judges
# only recorded rows): they join ROWS when a baseline is next recorded with them.
UNRECORDED_ROWS: tuple[RowSpec, ...] = (
    RowSpec("bulk, vendor batch API", f"bulk/{_PG}", "bulk/bare-c100", Target(ratio_at_least=5)),
)


def amount(value: float, unit: str) -> str:
    """``value`` in ``unit`` as the table shows it (``share`` is a fraction shown in %)."""
    if unit == "share":
        return f"{value:.0%}"
    if unit == "MB":
        return f"{value:,.0f} MB"
    return f"{value:,.0f} {unit}"


def ratio(subject: float, other: float) -> float | None:
    return subject / other if other else None


def rows(figures: Mapping[str, Figure], specs: Iterable[RowSpec] = ROWS) -> list[Row]:
    """One row per spec whose Homing figure was measured; the other may be missing
    (then a case's several comparisons collapse into one row)."""
    built = []
    alone: set[tuple[str, str]] = set()
    for spec in specs:
        subject = figures.get(spec.subject)
        other = figures.get(spec.other)
        if subject is None or (other is None and (spec.case, spec.subject) in alone):
            continue
        if other is None:
            alone.add((spec.case, spec.subject))
        r = ratio(subject.value, other.value) if other else None
        target, verdict = "", ""
        if spec.target is not None:
            target = spec.target.describe(subject.unit)
            met = spec.target.met(subject.value, r)
            verdict = {True: "meets", False: "MISSES", None: "?"}[met]
        built.append(Row(spec.case, subject, other, r, target, verdict))
    return built


def table(built: list[Row]) -> list[str]:
    """The rows as aligned text, one header line first."""
    header = ("case", "Homing", "compared with", "its figure", "ratio", "target", "")
    cells = [header] + [
        (
            row.case,
            amount(row.subject.value, row.subject.unit),
            row.other.label if row.other else "—",
            amount(row.other.value, row.other.unit) if row.other else "—",
            f"{row.ratio:.2f}" if row.ratio is not None else "—",
            row.target,
            row.verdict,
        )
        for row in built
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    right = {1, 3, 4}
    return [
        "  ".join(
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(line)
        ).rstrip()
        for line in cells
    ]


def notes(figures: Iterable[Figure]) -> list[str]:
    """``label: note`` for every figure that carries one."""
    return [f"{figure.key} ({figure.label}): {figure.note}" for figure in figures if figure.note]
