"""Constraints: feasibility-weighted acquisition, best feasible incumbents, Optuna's two ways."""

import math

import numpy as np
import optuna
import pytest

from common.constraints import effective_values
from common.history import History
from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler

SAMPLERS = [CoCaBOSampler, CasmopolitanSampler, BOFMSampler, MixboSampler]


def test_feasible_trials_rank_first_and_infeasible_ones_by_violation() -> None:
    history = History.from_lists(
        [{}] * 4, [0.0, 5.0, 1.0, 2.0], constraints=[[1.0], [-1.0], [3.0], [math.nan]]
    )
    assert history.constrained
    np.testing.assert_array_equal(history.feasible, [False, True, False, False])
    eff = effective_values(history)
    assert eff[1] == 5.0  # the only feasible trial is the best
    assert eff[1] < eff[3] < eff[0] < eff[2]  # unknown (no violation), then by violation


def test_an_unconstrained_history_keeps_its_values() -> None:
    history = History.from_lists([{}] * 2, [3.0, 1.0])
    assert not history.constrained and history.feasible.all()
    np.testing.assert_array_equal(effective_values(history), [3.0, 1.0])


def _objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -3, 3)
    y = trial.suggest_float("y", -3, 3)
    kind = trial.suggest_categorical("kind", ["a", "b"])
    trial.set_constraint("sum", x + y - 1.0)  # feasible: x + y <= 1
    return (x - 2) ** 2 + (y - 2) ** 2 + (0.5 if kind == "b" else 0.0)


@pytest.mark.parametrize("sampler_cls", SAMPLERS)
def test_constraints_steer_the_search_to_the_feasible_side(sampler_cls) -> None:
    # the unconstrained optimum (2, 2) is infeasible; the constrained one is (0.5, 0.5)
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=8))
    study.optimize(_objective, n_trials=26)
    after_design = study.trials[8:]
    feasible = [t for t in after_design if t.constraints["sum"] <= 0]
    assert len(feasible) >= len(after_design) // 2
    best = min(t.value for t in study.trials if t.constraints["sum"] <= 0)
    assert best < 6.0  # constrained optimum 4.5; the design alone rarely gets below 6


@pytest.mark.parametrize("sampler_cls", [CoCaBOSampler, CasmopolitanSampler, BOFMSampler])
def test_constraint_values_change_the_suggestion(sampler_cls) -> None:
    def run(with_constraints: bool) -> dict:
        study = optuna.create_study(sampler=sampler_cls(seed=3, n_startup_trials=6))
        rng = np.random.default_rng(0)
        dists = {
            "x": optuna.distributions.FloatDistribution(-3, 3),
            "y": optuna.distributions.FloatDistribution(-3, 3),
            "kind": optuna.distributions.CategoricalDistribution(["a", "b"]),
        }
        for _ in range(10):
            params = {"x": rng.uniform(-3, 3), "y": rng.uniform(-3, 3), "kind": "a"}
            value = (params["x"] - 2) ** 2 + (params["y"] - 2) ** 2
            attrs = {"constraints": (params["x"] + params["y"] - 1.0,)} if with_constraints else {}
            study.add_trial(
                optuna.trial.create_trial(
                    params=params, distributions=dists, value=value, system_attrs=attrs
                )
            )
        trial = study.ask(dists)
        return trial.params

    free, constrained = run(False), run(True)
    assert free != constrained  # same seed, same trials: only the constraint values differ
    assert run(True) == constrained


@pytest.mark.parametrize("sampler_cls", SAMPLERS)
def test_infeasible_only_and_unreported_histories_still_give_suggestions(
    sampler_cls, caplog
) -> None:
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=4))

    def never_feasible(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        kind = trial.suggest_categorical("kind", ["a", "b"])
        if trial.number % 3:  # some trials report no constraint at all
            trial.set_constraint("c", 1.0 + x)
        return x + (kind == "b")

    with caplog.at_level("WARNING"):
        study.optimize(never_feasible, n_trials=10)
    assert len(study.trials) == 10
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    assert "failed to suggest" not in caplog.text
    # seeking feasibility: with x the only lever, the model pushes x down
    assert np.median([t.params["x"] for t in study.trials[4:]]) < 0.5


def test_constraints_func_is_stored_and_used_as_optunas_samplers_do() -> None:
    sampler = CasmopolitanSampler(
        seed=0, n_startup_trials=4, constraints_func=lambda t: (t.params["x"] - 0.2,)
    )
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: -t.suggest_float("x", 0, 1), n_trials=12)
    assert all(list(t.constraints.values()) == [t.params["x"] - 0.2] for t in study.trials)
    feasible = [t.params["x"] for t in study.trials if t.params["x"] <= 0.2]
    assert max(feasible) > 0.15  # the optimum is on the boundary, x = 0.2
    with pytest.raises(ValueError, match="callable"):
        CasmopolitanSampler(constraints_func=3)
