"""The results pages in docs/ are what the stored runs give, and the README quotes them exactly."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest

from mixbo_compare import pages, provenance, report

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
STORED = pages.stored(DOCS)


def test_results_pages_are_stored_with_their_provenance() -> None:
    assert STORED, "docs/runs holds the runs the results pages are built from"
    for folder in STORED:
        stamp = provenance.read(folder)
        assert stamp and stamp["commit"] != "unknown"
        assert stamp["command"].startswith(("mixbo-", "OMP_NUM_THREADS=1 python benchmarks/"))


@pytest.mark.parametrize("folder", STORED, ids=[p.name for p in STORED])
def test_each_page_is_what_its_stored_runs_give(folder: Path) -> None:
    assert (DOCS / "results" / f"{folder.name}.md").read_text() == pages.page(folder)


def _kind(folder: Path) -> str:
    """Which kind of page a stored folder makes, from its committed files only (``runs.jsonl`` is
    a local cache that a fresh clone lacks)."""
    if (folder / pages.LATENCY).exists():
        return "latency"
    if (folder / pages.LONG_STUDY).exists():
        return "long-study"
    with open(folder / report.RUNS_CSV, newline="") as f:
        rows = list(csv.DictReader(f))
    multi = any(row.get("normalisation") or row["problem"].startswith("mo-") for row in rows)
    return "multi-objective" if multi else "single-objective"


def _stored_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.name != "runs.jsonl")


def _smallest_of_each_kind(folders: list[Path]) -> list[Path]:
    """One stored folder per kind of page (single-objective, multi-objective, latency), the
    smallest: every kind of page is rebuilt without drawing every plot again."""
    kinds: dict[str, Path] = {}
    for folder in sorted(folders, key=_stored_size):
        kinds.setdefault(_kind(folder), folder)
    return list(kinds.values())


def test_rebuilding_writes_every_page_and_its_plots(tmp_path: Path) -> None:
    chosen = _smallest_of_each_kind(STORED)
    assert len(chosen) >= 3  # single-objective, multi-objective and latency pages at least
    for folder in chosen:
        shutil.copytree(folder, tmp_path / "runs" / folder.name)
    written = pages.rebuild(tmp_path)
    for folder in chosen:
        assert (tmp_path / "results" / f"{folder.name}.md") in written
        if (folder / report.RUNS_CSV).exists():
            assert list((tmp_path / "results" / folder.name).glob("convergence_*.png"))
    index = (tmp_path / "results" / "README.md").read_text()
    assert all(f"({p.name}.md)" in index for p in chosen)


def _quoted_tables(text: str) -> list[tuple[str, list[str]]]:
    """The lines (a table's rows, a summary) under each ``<!-- quoted from
    docs/results/NAME.md -->`` line, up to the next blank line."""
    found = []
    for match in re.finditer(r"<!-- quoted from docs/results/(\S+)\.md -->\n((?:.+\n)+)", text):
        found.append((match.group(1), match.group(2).splitlines()))
    return found


def test_every_figure_the_readme_quotes_is_the_generated_pages() -> None:
    quotes = _quoted_tables((ROOT / "README.md").read_text())
    assert quotes, "the README quotes its headline table from docs/results"
    for name, rows in quotes:
        page = (DOCS / "results" / f"{name}.md").read_text().splitlines()
        for row in rows:
            assert row in page, f"README row not in docs/results/{name}.md: {row}"
