"""PLAyBOOK keeps busy points apart for every method: asks without tells on one Optuna study."""

from __future__ import annotations

import itertools

import numpy as np
import optuna
import pytest

from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler
from optuna_plugins._space import to_mixed_space

SAMPLERS = {
    "cocabo": CoCaBOSampler,
    "casmopolitan": CasmopolitanSampler,
    "bofm": BOFMSampler,
    "mixbo": MixboSampler,
}
MIN_SPREAD = 0.02


def objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -5, 5)
    y = trial.suggest_float("y", -5, 5)
    n = trial.suggest_int("n", 0, 6)
    c = trial.suggest_categorical("c", ["a", "b", "c"])
    return (x - 1) ** 2 + 0.5 * (y + 2) ** 2 + abs(n - 4) + {"a": 0.0, "b": 1.5, "c": 3.0}[c]


def spread(params: list[dict], distributions: dict) -> float:
    """The smallest distance between two configurations: Euclidean over the numeric parameters
    scaled to [0, 1] (as the models see them), plus one per categorical that differs."""
    space = to_mixed_space(distributions)
    X = space.encode(params)
    cont, cat = list(space.cont_dims), list(space.cat_dims)
    return min(
        float(np.linalg.norm(X[i, cont] - X[j, cont]) + (X[i, cat] != X[j, cat]).sum())
        for i, j in itertools.combinations(range(len(X)), 2)
    )


def busy_suggestions(sampler: optuna.samplers.BaseSampler, n_done: int, n_asks: int):
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=n_done)
    running = []
    for _ in range(n_asks):  # each later ask sees the earlier ones as running (busy points)
        trial = study.ask()
        objective(trial)
        running.append(trial)
    return [t.params for t in running], study.trials[-1].distributions


@pytest.mark.parametrize(
    "seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]
)
@pytest.mark.parametrize("name", list(SAMPLERS))
def test_four_busy_suggestions_are_kept_apart(name: str, seed: int) -> None:
    params, distributions = busy_suggestions(SAMPLERS[name](seed=seed), n_done=16, n_asks=4)
    assert spread(params, distributions) >= MIN_SPREAD


def test_the_spread_measure_counts_scaled_distance_and_category_changes() -> None:
    dists = {
        "x": optuna.distributions.FloatDistribution(0, 10),
        "c": optuna.distributions.CategoricalDistribution(["a", "b"]),
    }
    near = [{"x": 1.0, "c": "a"}, {"x": 1.1, "c": "a"}, {"x": 1.0, "c": "b"}]
    assert spread(near, dists) == pytest.approx(0.01)
    assert spread(near[::2], dists) == pytest.approx(1.0)
