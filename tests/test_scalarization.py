"""ParEGO's scalarisation of multi-objective histories, and the engine's multi-objective history."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from common.acquisition.scalarization import (
    RHO,
    chebyshev,
    non_dominated,
    normalized,
    random_weights,
    scalarize,
    single_objective,
)
from common.engine import Observations, SuggestionEngine
from common.methods.cocabo.options import CoCaBOOptions
from common.space.history import History

CONFIGS = tuple({"x": float(i)} for i in range(4))


def _engine(seed: int = 0) -> SuggestionEngine:
    return SuggestionEngine(
        CoCaBOOptions(), name="Test", logger=logging.getLogger("test.mixbo"), seed=seed
    )


def _history(objectives, constraints=None) -> History:
    y = np.asarray(objectives, dtype=float)
    return History(CONFIGS[: len(y)], np.zeros(len(y)), constraints=constraints, objectives=y)


def test_normalized_maps_the_non_dominated_set_onto_the_unit_square() -> None:
    y = np.array([[0.0, 40.0], [1.0, 10.0], [4.0, 0.0], [5.0, 50.0]])
    # the front (rows 0-2) spans [0, 1]; the dominated row lies beyond it, not at 1
    assert np.allclose(normalized(y), [[0.0, 1.0], [0.25, 0.25], [1.0, 0.0], [1.25, 1.25]])
    # dominated trials, however far, do not move the front's coordinates
    far = normalized(np.vstack([y, [[500.0, 9000.0]]]))
    assert np.allclose(far[:3], normalized(y)[:3])
    # a front of one point: the whole range of the reference rows
    y1 = np.array([[1.0, 10.0], [3.0, 30.0], [2.0, 10.0]])
    assert np.allclose(normalized(y1), [[0.0, 0.0], [1.0, 1.0], [0.5, 0.0]])
    constant = normalized(np.array([[1.0, 5.0], [2.0, 5.0]]))
    assert np.allclose(constant[:, 1], 0.0)  # a constant objective does not divide by zero
    # the front of the reference rows only; the others may fall outside [0, 1]
    ref = normalized(y, np.array([True, True, False, False]))
    assert np.allclose(ref[:, 0], [0.0, 1.0, 4.0, 5.0]) and np.allclose(
        ref[:, 1], [1.0, 0.0, -1 / 3, 4 / 3]
    )
    assert np.allclose(normalized(y, np.zeros(4, bool)), normalized(y))  # no reference: all rows


def test_non_dominated_matches_the_pairwise_definition() -> None:
    rng = np.random.default_rng(0)
    for trial in range(50):
        y = rng.integers(0, 4, size=(rng.integers(1, 30), 1 + trial % 3)).astype(float)
        no_worse = np.all(y[:, None, :] <= y[None, :, :], axis=2)
        better = np.any(y[:, None, :] < y[None, :, :], axis=2)
        assert np.array_equal(non_dominated(y), ~np.any(no_worse & better, axis=0))
    assert non_dominated(np.array([[1.0, 1.0], [1.0, 1.0], [2.0, 0.0]])).all()  # ties kept


def test_weights_lie_on_the_simplex_and_follow_the_generator() -> None:
    draws = np.array([random_weights(3, np.random.default_rng(s)) for s in range(200)])
    assert np.all(draws > 0) and np.allclose(draws.sum(axis=1), 1.0)
    assert np.allclose(draws.mean(axis=0), 1 / 3, atol=0.05)  # uniform: no objective favoured
    assert len({tuple(np.round(w, 12)) for w in draws}) == 200  # not a small fixed lattice
    a = random_weights(2, np.random.default_rng([7, 3, 0]))
    b = random_weights(2, np.random.default_rng([7, 3, 0]))
    c = random_weights(2, np.random.default_rng([7, 4, 0]))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_augmented_chebyshev() -> None:
    y = np.array([[0.2, 0.8], [0.5, 0.5]])
    w = np.array([0.5, 0.5])
    assert np.allclose(chebyshev(y, w), [0.4 + RHO * 0.5, 0.25 + RHO * 0.5])
    # the augmentation breaks the tie between a point and one weakly dominating it
    assert chebyshev(np.array([[0.5, 0.1], [0.5, 0.3]]), w).argmin() == 0


def test_scalarize_ranks_a_dominated_trial_below_the_one_dominating_it_for_any_weights() -> None:
    history = _history([[1.0, 4.0], [2.0, 5.0], [4.0, 1.0]])
    for seed in range(20):
        s = scalarize(history, random_weights(2, np.random.default_rng(seed)))
        assert s[0] < s[1]


def test_constrained_history_normalises_by_the_feasible_range() -> None:
    history = _history([[0.0, 0.0], [10.0, 10.0], [20.0, 20.0]], [[1.0], [-1.0], [-1.0]])
    s = scalarize(history, np.array([1.0, 0.0]))
    assert np.isclose(s[1], 0.0 + RHO * 0.0) and np.isclose(s[2], 1.0 + RHO)
    assert s[0] < 0  # the infeasible trial lies outside the feasible range


def test_single_objective_history_is_returned_untouched() -> None:
    history = History(CONFIGS[:2], np.array([1.0, 2.0]))
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert single_objective(history, rng) is history
    assert rng.bit_generator.state == state  # no draw: single-objective suggestions unchanged


def test_multi_objective_history_becomes_a_single_objective_one() -> None:
    history = _history([[1.0, 4.0], [2.0, 5.0], [4.0, 1.0]])
    a = single_objective(history, np.random.default_rng(1))
    b = single_objective(history, np.random.default_rng(1))
    c = single_objective(history, np.random.default_rng(2))
    assert np.array_equal(a.objectives, history.objectives)  # kept for per-objective models
    assert np.array_equal(a.values, b.values) and not np.array_equal(a.values, c.values)
    assert a.configs == history.configs


def test_engine_history_flips_maximised_objectives_and_drops_failed_rows() -> None:
    engine = _engine()
    configs = [{"x": float(i)} for i in range(5)]
    values = [[1.0, 2.0], None, [3.0, float("nan")], [1.0, 5.0], [0.5, 1.0]]
    history = engine.history(Observations(configs, values, maximize=[False, True]))
    assert history.n_objectives == 2 and len(history) == 3
    assert [c["x"] for c in history.configs] == [0.0, 3.0, 4.0]
    assert np.array_equal(history.objectives, [[1.0, -2.0], [1.0, -5.0], [0.5, -1.0]])
    # ``values`` is the equal-weight scalarisation: trial 3 dominates 0 once maximisation flips
    assert history.values[1] < history.values[0]


def test_engine_history_drops_pruned_trials_of_a_multi_objective_study() -> None:
    history = _engine().history(
        Observations(
            [{"x": 0.0}, {"x": 1.0}], [[1.0, 1.0], None], maximize=[False, False], pruned=[0, 1]
        )
    )
    assert [c["x"] for c in history.configs] == [0.0]


def test_engine_history_clips_infinite_values_per_objective_and_warns_once(caplog) -> None:
    engine = _engine()
    configs = [{"x": float(i)} for i in range(3)]
    values = [[1.0, 10.0], [float("inf"), 20.0], [3.0, -float("inf")]]
    with caplog.at_level(logging.WARNING, logger="test.mixbo"):
        history = engine.history(Observations(configs, values, maximize=[False, False]))
        engine.history(Observations(configs, values, maximize=[False, False]))
    assert np.array_equal(history.objectives, [[1.0, 10.0], [3.0, 20.0], [3.0, 10.0]])
    assert sum("infinite" in r.getMessage() for r in caplog.records) == 1


def test_engine_history_wants_a_bool_for_one_objective() -> None:
    engine = _engine()
    with pytest.raises(ValueError, match="one bool"):
        engine.history(Observations([{"x": 0.0}], [[2.0]], maximize=[True]))


def test_history_checks_its_objectives() -> None:
    with pytest.raises(ValueError, match="objectives"):
        History(CONFIGS[:2], np.zeros(2), objectives=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="finite"):
        History(CONFIGS[:1], np.zeros(1), objectives=np.array([[np.inf, 0.0]]))
