"""The long-study page: rows stored by ``benchmarks/long_study.py --out``, rendered by
``python -m mixbo_compare.pages``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mixbo_compare import pages, provenance, report_long_study

ROOT = Path(__file__).resolve().parents[1]


def _row(n: int, sampler: str, median: float, worst: float, peak: float) -> dict:
    about = {"problem": "bbob-mixint-f15-d10", "seed": 0, "clock": "CPU s"}
    return {**about, "n": n, "sampler": sampler, "median": median, "max": worst, "peak_mib": peak}


def test_the_summary_gives_mixbos_figures_against_the_baseline(tmp_path: Path) -> None:
    rows = [
        {**_row(1000, "mixbo", 0.05, 0.2, 400.0), "elapsed": 60.0},
        {**_row(2000, "mixbo", 0.08, 0.5, 420.0), "elapsed": 150.0},
        {**_row(1000, "tpe", 0.01, 0.02, 200.0), "elapsed": 10.0},
        {**_row(2000, "tpe", 0.02, 0.04, 210.0), "elapsed": 25.0},
    ]
    report_long_study.write(tmp_path, rows)
    assert report_long_study.load(tmp_path) == rows
    text = report_long_study.page(tmp_path)
    assert (
        "At 2,000 trials MixboSampler's median ask takes 0.080 s (4.00x TPESampler's 0.020 s), "
        "its slowest of the last asks 0.50 s, with 420 MiB peak memory; at 1,000 trials its "
        "median was 0.050 s."
    ) in text
    assert "| MixboSampler | 2,000 | 0.0800 | 0.5000 | 420 | 150 |" in text
    assert "50 asks before it (CPU s of `study.ask`" in text


def test_the_benchmark_stores_a_folder_the_pages_render(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "long-study"
    command = [sys.executable, str(ROOT / "benchmarks" / "long_study.py"), "--cpu", "--jobs", "2"]
    flags = ["--samplers", "random,tpe", "--checkpoints", "60,120", "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([*command, *flags], check=True, env=env, capture_output=True, cwd=ROOT)
    rows = report_long_study.load(out)
    assert [(r["sampler"], r["n"]) for r in rows] == [
        ("random", 60),
        ("random", 120),
        ("tpe", 60),
        ("tpe", 120),
    ]
    assert all(r["max"] >= r["median"] > 0 and r["peak_mib"] > 0 for r in rows)
    assert provenance.read(out)["command"].startswith("OMP_NUM_THREADS=1 python ")
    written = pages.rebuild(tmp_path)
    page = (tmp_path / "results" / "long-study.md").read_text()
    assert tmp_path / "results" / "long-study.md" in written
    assert "| TPESampler | 120 |" in page and "Code: mixbo at commit" in page
