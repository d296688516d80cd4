"""A 1000-trial study finishes with each sampler (slow: 2.5–5 minutes per sampler on one core; the
four take 7.5 minutes with `-n 2` at bb74724).

Each study runs in a fresh process (``benchmarks/memory.py``), so its peak memory is its own.
``MIXBO_LONG_STUDY_TRIALS`` sets a smaller study to try the tests out.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from memory import measure  # noqa: E402

N_TRIALS = int(os.environ.get("MIXBO_LONG_STUDY_TRIALS", "1000"))
# peak resident memory of the whole process; 300-trial studies peaked at 450-500 MiB
PEAK_LIMIT_MIB = 2048


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cocabo", "casmopolitan", "bofm", "mixbo"])
def test_a_long_study_finishes_and_keeps_improving(name) -> None:
    report = measure(name, N_TRIALS, every=max(N_TRIALS // 4, 1), seed=0)
    assert report["complete"] == N_TRIALS
    failures = [w for w in report["warnings"] if "failed to suggest" in w]
    assert not failures, failures  # the model, not the random fallback, made the suggestions
    assert report["best"] < report["best_startup"]  # the model improved on the random design
    assert max(report["peaks"].values()) < PEAK_LIMIT_MIB, report["peaks"]
