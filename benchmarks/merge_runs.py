"""Merge the CSVs of several ``mixbo-compare`` runs into one folder, for ``--report-only``.

A table can join runs made at different times (our samplers at one commit, Optuna's at
another; seeds 0–9 and 10–19): each source is a ``mixbo-compare -o`` folder, optionally with
``--keep`` filters on its rows. Then ``mixbo-compare --report-only OUT`` rebuilds the table, the
mean ranks and the plots from the merged rows.

    python benchmarks/merge_runs.py merged ours/ baselines/ --keep 'sampler != "mixbo"' ''
    python benchmarks/merge_runs.py merged ten/ twenty/ && mixbo-compare --report-only merged

``--keep`` takes one Python expression per source (in order; ``''`` keeps every row) over the
row's ``problem``, ``sampler`` and ``seed``. A run (problem, sampler, seed, workers) present in
two sources is an error: the table would count it twice.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

FILES = ("runs.csv", "trials.csv")


def _kept(row: dict[str, str], rule: str) -> bool:
    if not rule:
        return True
    names = {"problem": row["problem"], "sampler": row["sampler"], "seed": int(row["seed"])}
    return bool(eval(rule, {"__builtins__": {}}, names))


def merge(out: Path, sources: list[Path], keep: list[str]) -> dict[str, int]:
    """Write ``out/runs.csv`` and ``out/trials.csv`` from ``sources``; returns rows per file."""
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    seen: dict[tuple, int] = {}
    for name in FILES:
        header: list[str] | None = None
        rows: list[dict[str, str]] = []
        for index, (source, rule) in enumerate(zip(sources, keep, strict=True)):
            with open(source / name, newline="") as f:
                reader = csv.DictReader(f)
                header = header or list(reader.fieldnames or [])
                for row in reader:
                    if not _kept(row, rule):
                        continue
                    run = (row["problem"], row["sampler"], row["seed"], row["workers"])
                    if name == "runs.csv" and seen.setdefault(run, index) != index:
                        raise SystemExit(f"run {run} is in both {sources[seen[run]]} and {source}")
                    rows.append(row)
        with open(out / name, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=header or [])
            writer.writeheader()
            writer.writerows(rows)
        counts[name] = len(rows)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("sources", type=Path, nargs="+")
    parser.add_argument("--keep", nargs="+", default=None, help="one row filter per source")
    args = parser.parse_args()
    keep = args.keep if args.keep is not None else [""] * len(args.sources)
    if len(keep) != len(args.sources):
        parser.error("give one --keep expression per source ('' keeps every row)")
    for name, n in merge(args.out, args.sources, keep).items():
        print(f"{args.out / name}: {n} rows")


if __name__ == "__main__":
    main()
