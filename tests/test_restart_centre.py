"""CASMOPOLITAN's restart centres: GP-UCB on the earlier restarts' bests."""

from __future__ import annotations

import numpy as np

import common.models.kernel_choice
from common.methods.casmopolitan.restart_centre import choose_restart_centre, restart_candidates
from common.methods.casmopolitan.trust_region import TrustRegionConfig, replay
from common.space.configset import ConfigSet
from common.space.mixed_space import Categorical, MixedSpace


def _restarted(seed: int = 0):
    """A binary space and a history with several finished restarts (every failure shrinks)."""
    space = MixedSpace([Categorical(f"h{i}", (0, 1)) for i in range(6)])
    rng = np.random.default_rng(seed)
    X = space.sample(30, rng)
    y = rng.random(30)
    state = replay(y, TrustRegionConfig.for_dims(6, 0, failure_tolerance=1))
    assert state.restart >= 2
    return space, X, y, state


def test_restart_candidates_are_the_bests_of_the_finished_restarts() -> None:
    space, X, y, state = _restarted()
    Xa, ya = restart_candidates(X, y, state)
    assert len(Xa) == len(ya) == state.restart
    starts = [replay(y[:k], state.config).start for k in range(len(y) + 1)]
    for k, i in enumerate(state.restart_bests):
        assert ya[k] == y[i] and np.array_equal(Xa[k], X[i])
        begin = sorted(set(starts))[k]  # where restart k began
        end = sorted(set(starts))[k + 1]  # where the next one began
        assert begin <= i < end and y[i] == y[begin:end].min()


def test_restart_centre_avoids_excluded_rows_and_is_inside_the_space() -> None:
    space, X, y, state = _restarted()
    seen = ConfigSet(space, X)
    for seed in range(5):
        x = choose_restart_centre(space, X, y, state, np.random.default_rng(seed), exclude=seen)
        assert not seen.contains(x[None])[0]
        assert np.array_equal(space.round(x[None])[0], x)


def test_a_failing_gp_restarts_far_from_the_earlier_bests(monkeypatch, capture_logs) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("not positive definite")

    monkeypatch.setattr(common.models.kernel_choice, "fit_gp_scored", broken)
    space, X, y, state = _restarted()
    Xa, _ = restart_candidates(X, y, state)
    caplog = capture_logs("mixbo")  # the core's logger outside an adapter
    x = choose_restart_centre(space, X, y, state, np.random.default_rng(0), n_candidates=64)
    assert any("Restart GP failed" in r.getMessage() for r in caplog.records)
    assert (x != Xa).sum(axis=1).min() >= 3  # 64 random rows of 6 bits: one this far exists
