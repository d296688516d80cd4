"""A real Ray Tune run with 16 trials in flight on 2 CPUs, and a Tuner restored mid-run.

The runs and the slot measurements are ``benchmarks/tune_slots.py``'s: a trainable that sleeps,
fractional CPUs, the searcher's suggestions timed in the driver.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from tune_slots import run  # noqa: E402

# How long the searcher may sit idle while a slot is free, beyond the suggestions queued before it:
# Tune's event loop noticing the end and asking (measured on a loaded 2-core machine)
MARGIN_S = 2.0


@pytest.mark.slow
def test_sixteen_trials_in_flight_never_wait_on_an_idle_searcher(tmp_path) -> None:
    # trials long enough (30 s) for one searcher to refill 16 slots at ~1.5 s a suggestion
    out = run("cocabo", samples=48, concurrent=16, sleep=30.0, startup=8, storage=str(tmp_path))
    assert out.n_trials == out.n_reported == 48 and out.errors == 0
    assert out.peak_in_flight == 16  # every slot used, never more
    assert out.n_suggested == 48 and out.duplicates == 0
    assert len(out.idle) == 48 - 16
    assert max(out.idle) <= MARGIN_S, sorted(out.idle)[-5:]


@pytest.mark.slow
def test_a_tuner_restored_mid_run_finishes_without_duplicates(tmp_path) -> None:
    out = run(
        "casmopolitan",
        samples=20,
        concurrent=4,
        sleep=1.0,
        startup=4,
        interrupt_after=8,
        storage=str(tmp_path),
    )
    assert out.restored
    assert out.n_trials == 20 and out.errors == 0
    assert out.n_suggested == 20  # the interrupted trials ran again, not suggested again
    assert out.duplicates == 0  # a searcher restarted from its seed would repeat its first picks
