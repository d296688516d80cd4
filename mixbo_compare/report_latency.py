"""The time-per-suggestion page: what ``benchmarks/latency.py --prefilled --out DIR`` stored.

``latency.csv`` has one row per space (with a line on what it holds), number of trials already
in the study, and sampler: the seconds of a new sampler's first ask (*cold*: nothing fitted yet;
the median of three, each on its own copy of the study), the median, mean and slowest of its next
asks (*warm*), and a later new sampler's first ask (*join*: a worker joining a study where one
ran; the median of three). The page states the stamp
(:mod:`mixbo_compare.provenance`), a table per space with each figure's ratio to the baseline
sampler (the last one measured), and one summary line per space that the README quotes.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path

from mixbo_compare import provenance
from mixbo_compare.report import SAMPLER_CLASSES

LATENCY_CSV = "latency.csv"
FIELDS = (
    "space",
    "about",
    "n",
    "sampler",
    "clock",
    "cold",
    "warm",
    "warm_mean",
    "warm_max",
    "join",
)
TIMES = ("cold", "warm", "warm_mean", "warm_max", "join")


def write(folder: str | os.PathLike, rows: Sequence[dict]) -> None:
    """``rows`` (dicts with :data:`FIELDS`) as ``folder/latency.csv``."""
    with Path(folder, LATENCY_CSV).open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows({k: row[k] for k in FIELDS} for row in rows)


def load(folder: str | os.PathLike) -> list[dict]:
    """The rows of ``folder/latency.csv``, times as floats and ``n`` as an int."""
    with Path(folder, LATENCY_CSV).open() as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["n"] = int(row["n"])
        row.update({k: float(row[k]) for k in TIMES})
    return rows


def summary(rows: Sequence[dict], space: str) -> str | None:
    """One sentence on ``space``: mixbo's warm median (with its ratio to the baseline's) and
    slowest, and a new worker's first suggestion, at each study size; ``None`` if mixbo was not
    measured there."""
    mine = sorted(
        (r for r in rows if r["space"] == space and r["sampler"] == "mixbo"), key=lambda r: r["n"]
    )
    if not mine:
        return None
    warm = []
    for row in mine:
        base = _baseline(rows, row)
        ratio = f"{row['warm'] / base['warm']:.2f}x {_name(base['sampler'])}'s, " if base else ""
        warm.append(
            f"{row['warm']:.2f} s with {row['n']:,} trials ({ratio}slowest {row['warm_max']:.2f} s)"
        )
    cold = " and ".join(f"{r['cold']:.2f} s" for r in mine)
    return (
        f"{space}: MixboSampler's warm suggestion takes a median {' and '.join(warm)}; "
        f"a new worker's first, {cold}."
    )


def _baseline(rows: Sequence[dict], row: dict) -> dict | None:
    """The baseline's row (the last sampler measured) at ``row``'s space and size."""
    same = [r for r in rows if r["space"] == row["space"] and r["n"] == row["n"]]
    return same[-1] if same and same[-1]["sampler"] != row["sampler"] else None


def _name(sampler: str) -> str:
    return SAMPLER_CLASSES.get(sampler, sampler)


def page(folder: str | os.PathLike) -> str:
    """The markdown page of one stored latency folder."""
    rows = load(folder)
    stamp = provenance.read(folder)
    clock = {r["clock"] for r in rows}
    lines = ["# Time per suggestion", ""]
    if stamp:
        lines += provenance.stamp(stamp)
    lines += [
        f"Clock: {' and '.join(sorted(clock))}. Each study holds N trials of random search on the "
        "space; a new sampler then asks: **cold** is its first ask (nothing fitted yet; the "
        "median of three new samplers' first asks, each on its own copy of the study), **warm** "
        "the median, mean and slowest of its next asks (each told before the next), **join** "
        "the first ask of a new sampler after those (the median of three in turn; a worker "
        "joining a study where one ran). Ratios: to the last sampler of each block, Optuna's "
        "defaults; GPSampler with greenlet where it is installed.",
        "",
    ]
    for space, about in dict.fromkeys((r["space"], r["about"]) for r in rows):
        said = summary(rows, space)
        lines += [f"## {space}", "", f"{about}.", "", *([said, ""] if said else [])]
        lines += [
            "| N | sampler | cold | warm | warm mean | warm max | join | ratios (same order) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in (r for r in rows if r["space"] == space):
            base = _baseline(rows, row) or row
            cells = " | ".join(f"{row[k]:.3f}" for k in TIMES)
            ratios = " / ".join(f"{row[k] / base[k]:.2f}" for k in TIMES)
            lines.append(f"| {row['n']:,} | {_name(row['sampler'])} | {cells} | {ratios} |")
        lines.append("")
    return "\n".join(lines)
