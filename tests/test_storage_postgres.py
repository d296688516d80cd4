"""Eight worker processes on one PostgreSQL storage: no duplicate, no lost trial, no error.

The server is real and started here (``benchmarks/postgres.py``: ``initdb`` + ``pg_ctl`` from
PATH or Debian's ``postgresql`` package); the tests skip, saying why, where none can be started.
The workers and the checks are ``benchmarks/storage_workers.py``'s.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from postgres import NoServer, TemporaryServer  # noqa: E402
from storage_workers import Outcome, run_workers  # noqa: E402

# A trial that starts before any trial has completed is a start-up trial, but the adapter decides
# whether to warn about independent sampling when each parameter is drawn, by which time other
# workers may have completed trials: a spurious warning in the first trials of a many-worker study.
RACE = "sampled independently"


@pytest.fixture(scope="module")
def postgres_url():
    try:
        server = TemporaryServer()
    except NoServer as error:
        pytest.skip(f"no PostgreSQL server can be started here: {error}")
    yield server.url
    server.stop()


def _check(out: Outcome, n_trials: int) -> None:
    assert out.states == {"COMPLETE": n_trials}, out.states  # nothing failed, nothing left running
    assert out.n_trials == n_trials
    assert not out.lost, f"trials not reported by exactly one worker: {out.lost}"
    assert not out.duplicates, f"duplicated configurations: {out.overlaps}"
    assert not [w for w in out.warnings if RACE not in w], out.warnings


def test_eight_processes_share_one_postgresql_study(postgres_url) -> None:
    out = run_workers(postgres_url, "cocabo", n_workers=8, n_trials=16, startup=4)
    _check(out, 16)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cocabo", "casmopolitan"])
def test_eight_processes_run_200_trials_on_postgresql(postgres_url, name) -> None:
    out = run_workers(postgres_url, name, n_workers=8, n_trials=200, startup=10)
    _check(out, 200)
