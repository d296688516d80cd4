"""The time-per-suggestion page: rows stored by ``benchmarks/latency.py --out``, rendered by
``python -m mixbo_compare.pages``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mixbo_compare import pages, provenance, report_latency

ROOT = Path(__file__).resolve().parents[1]


def _row(n: int, sampler: str, cold: float, warm: float, worst: float) -> dict:
    times = {"cold": cold, "warm": warm, "warm_mean": warm, "warm_max": worst, "join": cold / 2}
    about = "4 float, 2 int, 3 categorical parameters"
    return {
        "space": "mixed9",
        "about": about,
        "n": n,
        "sampler": sampler,
        "clock": "CPU s",
        **times,
    }


def test_the_summary_gives_mixbos_times_and_ratios_to_the_baseline(tmp_path: Path) -> None:
    rows = [
        _row(100, "mixbo", 0.3, 0.1, 0.2),
        _row(100, "gp", 0.6, 0.5, 0.9),
        _row(1000, "mixbo", 2.0, 0.4, 1.2),
        _row(1000, "gp", 3.0, 2.0, 4.0),
    ]
    report_latency.write(tmp_path, rows)
    assert report_latency.load(tmp_path) == rows
    text = report_latency.page(tmp_path)
    assert "## mixed9\n\n4 float, 2 int, 3 categorical parameters.\n" in text
    assert (
        "mixed9: MixboSampler's warm suggestion takes a median 0.10 s with 100 trials (0.20x "
        "GPSampler's, slowest 0.20 s) and 0.40 s with 1,000 trials (0.20x GPSampler's, slowest "
        "1.20 s); a new worker's first, 0.30 s and 2.00 s."
    ) in text
    mixbo = "| 1,000 | MixboSampler | 2.000 | 0.400 | 0.400 | 1.200 | 1.000 |"
    assert f"{mixbo} 0.67 / 0.20 / 0.20 / 0.30 / 0.67 |" in text
    assert "| 1,000 | GPSampler | 3.000 | 2.000 | 2.000 | 4.000 | 1.500 | 1.00 / 1.00" in text


def test_the_benchmark_stores_a_folder_the_pages_render(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "latency"
    command = [sys.executable, str(ROOT / "benchmarks" / "latency.py"), "--prefilled"]
    flags = ["--checkpoints", "12", "--asks", "1", "--samplers", "random,tpe", "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([*command, *flags], check=True, env=env, capture_output=True, cwd=ROOT)
    subprocess.run([*command, *flags], check=True, env=env, capture_output=True, cwd=ROOT)
    rows = report_latency.load(out)  # measured again: replaced, not listed twice
    assert [(r["n"], r["sampler"]) for r in rows] == [(12, "random"), (12, "tpe")]
    stamp = provenance.read(out)
    assert stamp["command"].startswith("OMP_NUM_THREADS=1 python ") and "code" not in stamp
    assert " && " not in stamp["command"]  # the same command again is stated once
    written = pages.rebuild(tmp_path)
    page = (tmp_path / "results" / "latency.md").read_text()
    assert tmp_path / "results" / "latency.md" in written
    assert "| 12 | TPESampler |" in page and "Code: mixbo at commit" in page


def test_the_runs_a_measurement_writes_and_the_docs_do_not_make_the_code_dirty(
    tmp_path: Path,
) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "docs" / "runs").mkdir(parents=True)
    (tmp_path / "code.py").write_text("x = 1\n")
    written = ["docs/runs/latency.csv", "docs/decisions.md", "README.md"]
    for name in written:
        (tmp_path / name).write_text("a\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "m")
    for name in written:
        (tmp_path / name).write_text("b\n")
    assert not provenance.git_commit(tmp_path).endswith("-dirty")
    (tmp_path / "code.py").write_text("x = 2\n")
    assert provenance.git_commit(tmp_path).endswith("-dirty")
