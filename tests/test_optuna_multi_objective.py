"""Multi-objective Optuna studies: ParEGO's scalarisations under every sampler."""

from __future__ import annotations

import numpy as np
import optuna
import pytest
from optuna.study import StudyDirection
from optuna.trial import TrialState

PENALTY = {"a": 0.0, "b": 0.4, "c": 0.8}
TWO = ["minimize", "maximize"]
THREE = ["minimize", "maximize", "minimize"]


def two(trial: optuna.Trial) -> tuple[float, float]:
    """A mixed bi-objective problem (the second maximised): the front is c = "a", y = 0.5."""
    x = trial.suggest_float("x", 0, 1)
    y = trial.suggest_float("y", 0, 1)
    base = PENALTY[trial.suggest_categorical("c", list(PENALTY))] + 2 * (y - 0.5) ** 2
    return x + base, -((1 - x) ** 2 + base)


def three(trial: optuna.Trial) -> tuple[float, float, float]:
    x = trial.suggest_float("x", 0, 1)
    y = trial.suggest_float("y", 0, 1)
    base = PENALTY[trial.suggest_categorical("c", list(PENALTY))]
    shared = base + (y - 0.5) ** 2
    return x + shared, -((1 - x) ** 2 + shared), (x - 0.5) ** 2 + (y - 0.2) ** 2 + base


def dominated_share(study: optuna.Study) -> float:
    """A Monte Carlo hypervolume: the share of fixed random points of a box that the study's
    trials dominate (all objectives minimised), the same points for every study."""
    signs = np.array([1.0 if d == StudyDirection.MINIMIZE else -1.0 for d in study.directions])
    y = np.array([t.values for t in study.trials]) * signs
    m = y.shape[1]
    points = np.random.default_rng(0).uniform(-1.0, 2.5, size=(20_000, m))
    return float((y[None] <= points[:, None]).all(-1).any(-1).mean())


def count_model_calls(sampler) -> list[int]:
    calls: list[int] = []
    strategy = sampler._strategy
    original = strategy.suggest

    def spy(space, history, n, rng):
        assert history.n_objectives >= 2  # each objective's values, beside one scalarisation
        calls.append(len(history))
        return original(space, history, n, rng)

    strategy.suggest = spy
    return calls


@pytest.mark.parametrize("objective, directions", [(two, TWO), (three, THREE)])
def test_model_suggestions_beat_random_search(sampler_cls, objective, directions) -> None:
    sampler = sampler_cls(seed=0, n_startup_trials=10)
    calls = count_model_calls(sampler)
    study = optuna.create_study(directions=directions, sampler=sampler)
    study.optimize(objective, n_trials=30)
    assert len(calls) == 20  # every trial after the design came from the model
    assert study.best_trials and all(t.state == TrialState.COMPLETE for t in study.trials)
    randoms = []
    for seed in range(3):
        baseline = optuna.create_study(
            directions=directions, sampler=optuna.samplers.RandomSampler(seed=seed)
        )
        baseline.optimize(objective, n_trials=30)
        randoms.append(dominated_share(baseline))
    assert dominated_share(study) > max(randoms)


def test_the_same_seed_gives_the_same_suggestions(sampler_cls) -> None:
    params = []
    for _ in range(2):
        study = optuna.create_study(directions=TWO, sampler=sampler_cls(seed=3, n_startup_trials=4))
        study.optimize(two, n_trials=8)
        params.append([t.params for t in study.trials])
    assert params[0] == params[1]


def test_each_suggestion_draws_its_own_weights(sampler_cls) -> None:
    """ParEGO: the scalar values the method models change from one suggestion to the next."""
    sampler = sampler_cls(seed=0, n_startup_trials=4)
    seen: list[np.ndarray] = []
    strategy = sampler._strategy
    original = strategy.suggest
    strategy.suggest = lambda s, h, n, r: seen.append(h.values[:4]) or original(s, h, n, r)
    study = optuna.create_study(directions=TWO, sampler=sampler)
    study.optimize(two, n_trials=7)
    assert len(seen) == 3
    assert not np.allclose(seen[0], seen[1]) and not np.allclose(seen[1], seen[2])


def test_constrained_study_prefers_feasible_points(sampler_cls) -> None:
    def constraint(trial: optuna.trial.FrozenTrial) -> list[float]:
        return [trial.params["x"] - 0.3]  # feasible for x ≤ 0.3 (a third of the range)

    sampler = sampler_cls(seed=0, n_startup_trials=8, constraints_func=constraint)
    study = optuna.create_study(directions=TWO, sampler=sampler)
    study.optimize(two, n_trials=24)
    model = study.trials[8:]
    feasible = [t.params["x"] <= 0.3 for t in model]
    assert sum(feasible) >= 0.75 * len(model)  # random search: a third


def test_pending_trials_get_distinct_suggestions(sampler_cls) -> None:
    sampler = sampler_cls(seed=0, n_startup_trials=5)
    calls = count_model_calls(sampler)
    study = optuna.create_study(directions=TWO, sampler=sampler)
    study.optimize(two, n_trials=6)
    asked = [study.ask() for _ in range(4)]  # asked, never told: busy points for the next
    for trial in asked:
        two(trial)
    assert len(calls) == 1 + 4
    configs = {tuple(sorted(t.params.items())) for t in asked}
    assert len(configs) == 4


def test_pruned_trials_do_not_crash_the_study(sampler_cls) -> None:
    """Optuna allows no ``trial.report`` in multi-objective studies, but an objective may still
    raise ``TrialPruned``: such trials have no values and no curve, and are not modelled."""

    def sometimes_pruned(trial: optuna.Trial) -> tuple[float, float]:
        values = two(trial)
        if trial.number % 3 == 1:
            raise optuna.TrialPruned()
        return values

    sampler = sampler_cls(seed=0, n_startup_trials=4)
    calls = count_model_calls(sampler)
    study = optuna.create_study(directions=TWO, sampler=sampler)
    study.optimize(sometimes_pruned, n_trials=12)
    states = [t.state for t in study.trials]
    assert states.count(TrialState.PRUNED) == 4 and states.count(TrialState.COMPLETE) == 8
    completed_before = [sum(s == TrialState.COMPLETE for s in states[:i]) for i in range(12)]
    assert calls == [n for n in completed_before[4:]]  # the model sees the completed ones only
    configs = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(configs)) == 12  # pruned trials' configurations stay taken


def test_failed_and_nan_trials_are_left_out(sampler_cls) -> None:
    def flaky(trial: optuna.Trial) -> tuple[float, float]:
        values = two(trial)
        return (float("nan"), values[1]) if trial.number == 2 else values

    sampler = sampler_cls(seed=0, n_startup_trials=4)
    calls = count_model_calls(sampler)
    study = optuna.create_study(directions=TWO, sampler=sampler)
    study.optimize(flaky, n_trials=7)
    assert study.trials[2].state == TrialState.FAIL
    # failed trials are not issued ones either: trials 5 and 6 model 0, 1, 3, 4 (and 5)
    assert calls == [4, 5]
