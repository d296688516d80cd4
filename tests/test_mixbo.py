"""MixboSampler / MixboSearch: which method runs on which space, and that it runs it faithfully."""

from __future__ import annotations

import optuna
import pytest

from common.mixbo import Mixbo, choose_method
from common.problems import get_problem
from common.space import Categorical, Float, Integer, MixedSpace
from optuna_plugins import BOFMSampler, CasmopolitanSampler, MixboSampler


def _space(n_cat: int, n_int: int = 0, n_float: int = 0) -> MixedSpace:
    return MixedSpace(
        [Categorical(f"c{i}", ("a", "b", "c")) for i in range(n_cat)]
        + [Integer(f"i{i}", 1, 8) for i in range(n_int)]
        + [Float(f"f{i}", 0.0, 1.0) for i in range(n_float)]
    )


@pytest.mark.parametrize(
    "problem, method",
    [
        ("pest", "casmopolitan"),  # 25 categoricals
        ("contamination", "casmopolitan"),  # 25 binaries
        ("ackley53", "casmopolitan"),  # 50 binaries, 3 floats
        ("func2c", "casmopolitan"),  # 2 categoricals, 2 floats
        ("func3c", "casmopolitan"),  # 3 categoricals, 2 floats
        ("ackley5c", "casmopolitan"),  # 5 categoricals of 17 values, 1 float
        ("bbob-mixint-f10-d10", "bofm"),  # integers and floats
    ],
)
def test_the_method_follows_the_spaces_composition(problem, method) -> None:
    assert choose_method(get_problem(problem).space) == method


def test_one_categorical_parameter_decides() -> None:
    assert choose_method(_space(1, n_int=20, n_float=20)) == "casmopolitan"
    assert choose_method(_space(0, n_int=20, n_float=20)) == "bofm"
    assert choose_method(_space(0, n_float=3)) == "bofm"
    assert choose_method(_space(25)) == "casmopolitan"


def test_one_strategy_per_method_is_kept_across_spaces() -> None:
    strategy = Mixbo()
    numeric, mixed = _space(0, n_int=2, n_float=1), _space(12)
    assert strategy.method_for(numeric) is strategy.method_for(_space(0, n_float=4))
    assert type(strategy.method_for(numeric)).__name__ == "BOFM"
    assert type(strategy.method_for(mixed)).__name__ == "Casmopolitan"
    assert set(strategy.methods) == {"bofm", "casmopolitan"}


def _mixed(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -2, 2)
    n = trial.suggest_int("n", 0, 8)
    c = trial.suggest_categorical("c", ["a", "b", "c"])
    return (x - 0.5) ** 2 + abs(n - 3) / 4 + (c != "b")


def _numeric(trial: optuna.Trial) -> float:
    return (trial.suggest_float("x", -2, 2) - 0.5) ** 2 + abs(trial.suggest_int("n", 0, 8) - 3)


def _binary(trial: optuna.Trial) -> float:
    return sum(trial.suggest_categorical(f"b{i}", [0, 1]) * (i % 3 - 1) for i in range(12))


@pytest.mark.parametrize(
    "objective, same_as",
    [(_numeric, BOFMSampler), (_mixed, CasmopolitanSampler), (_binary, CasmopolitanSampler)],
)
def test_mixbo_runs_the_chosen_method_exactly(objective, same_as) -> None:
    params = []
    for cls in (MixboSampler, same_as):
        study = optuna.create_study(sampler=cls(seed=2, n_startup_trials=4))
        study.optimize(objective, n_trials=9)
        params.append([t.params for t in study.trials])
    assert params[0] == params[1]
