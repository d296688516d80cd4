"""The long-study page: what ``benchmarks/long_study.py --out DIR`` stored.

``long_study.csv`` has one row per sampler and checkpoint of one long sequential study: the
median and slowest of the asks just before the checkpoint, the process's peak resident memory
by then and the study's wall time so far. The page states the stamp
(:mod:`mixbo_compare.provenance`), one summary line (MixboSampler's median at the last checkpoint
against the baseline's, the last sampler measured) and the table.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path

from mixbo_compare import provenance
from mixbo_compare.report import SAMPLER_CLASSES

LONG_STUDY_CSV = "long_study.csv"
FIELDS = ("problem", "sampler", "seed", "clock", "n", "median", "max", "peak_mib", "elapsed")
NUMBERS = ("median", "max", "peak_mib", "elapsed")


def write(folder: str | os.PathLike, rows: Sequence[dict]) -> None:
    """``rows`` (dicts with :data:`FIELDS`) as ``folder/long_study.csv``."""
    with Path(folder, LONG_STUDY_CSV).open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows({k: row[k] for k in FIELDS} for row in rows)


def load(folder: str | os.PathLike) -> list[dict]:
    """The rows of ``folder/long_study.csv``, figures as floats, ``n`` and ``seed`` as ints."""
    with Path(folder, LONG_STUDY_CSV).open() as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["n"], row["seed"] = int(row["n"]), int(row["seed"])
        row.update({k: float(row[k]) for k in NUMBERS})
    return rows


def _name(sampler: str) -> str:
    return SAMPLER_CLASSES.get(sampler, sampler)


def summary(rows: Sequence[dict]) -> str | None:
    """One sentence: MixboSampler's median and slowest ask and peak memory at the largest
    checkpoint both it and the baseline (the last sampler measured) reached, with the ratio of
    the medians; ``None`` without both."""
    baseline = rows[-1]["sampler"] if rows else None
    mine = {r["n"]: r for r in rows if r["sampler"] == "mixbo"}
    theirs = {r["n"]: r for r in rows if r["sampler"] == baseline and baseline != "mixbo"}
    common = sorted(set(mine) & set(theirs))
    if not common:
        return None
    n = common[-1]
    m, b = mine[n], theirs[n]
    first = mine[min(mine)]
    return (
        f"At {n:,} trials MixboSampler's median ask takes {m['median']:.3f} s "
        f"({m['median'] / b['median']:.2f}x {_name(b['sampler'])}'s {b['median']:.3f} s), its "
        f"slowest of the last asks {m['max']:.2f} s, with {m['peak_mib']:.0f} MiB peak memory; "
        f"at {first['n']:,} trials its median was {first['median']:.3f} s."
    )


def page(folder: str | os.PathLike) -> str:
    """The markdown page of one stored long-study folder."""
    rows = load(folder)
    stamp = provenance.read(folder)
    lines = ["# Long studies: time per ask and memory", ""]
    if stamp:
        lines += provenance.stamp(stamp)
    problems = " and ".join(sorted({r["problem"] for r in rows}))
    lines += [
        f"One sequential study per sampler on {problems} (in-memory storage, one thread, each "
        "sampler in its own process). At each checkpoint: the median and the slowest of the 50 "
        f"asks before it ({' and '.join(sorted({r['clock'] for r in rows}))} of `study.ask` and "
        "the parameters' `suggest_*` calls), the process's peak resident memory so far, and the "
        "study's wall time so far.",
        "",
    ]
    said = summary(rows)
    if said:
        lines += [said, ""]
    lines += [
        "| sampler | trials | median ask (s) | slowest ask (s) | peak memory (MiB) | study (s) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {_name(r['sampler'])} | {r['n']:,} | {r['median']:.4f} | {r['max']:.4f} "
            f"| {r['peak_mib']:.0f} | {r['elapsed']:.0f} |"
        )
    lines.append("")
    return "\n".join(lines)
