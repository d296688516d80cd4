"""A search space that changes during an Optuna study: ranges that widen or shrink, choices that
come and go, and the sampler of parameters outside the relative search space."""

from __future__ import annotations

import json

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import create_trial

from optuna_plugins import MixboSampler
from optuna_plugins._base import (
    _RELATIVE_PARAMS_KEY,
    _same,
    _stored_text,
    fits_space,
    union_search_space,
)


def objective(high: float):
    def f(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, high)
        c = trial.suggest_categorical("c", ["a", "b"])
        return (x - 0.7) ** 2 + 0.3 * (c == "b")

    return f


def relatively_sampled(trial: optuna.trial.FrozenTrial) -> set[str]:
    """The parameters the sampler's relative (model) step gave ``trial``."""
    return set(json.loads(_stored_text(trial, _RELATIVE_PARAMS_KEY) or "{}"))


def test_a_widened_range_stays_modelled_without_warnings(sampler_cls, optuna_logs) -> None:
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=3))
    study.optimize(objective(1.0), n_trials=5)
    study.optimize(objective(10.0), n_trials=4)
    later = study.trials[5:]
    assert all(t.distributions["x"] == FloatDistribution(0.0, 10.0) for t in later)
    # every later x came from the relative (model) step, over the new range
    assert all("x" in relatively_sampled(t) for t in later)
    space = study.sampler.infer_relative_search_space(study, later[-1])
    assert space["x"] == FloatDistribution(0.0, 10.0)
    assert "sampled independently" not in optuna_logs.text
    assert "every configuration" not in optuna_logs.text


def test_a_value_outside_a_shrunken_range_is_not_fed_to_the_model(sampler_cls) -> None:
    sampler = sampler_cls(seed=0, n_startup_trials=3)
    study = optuna.create_study(sampler=sampler)
    for x in (0.5, 3.0, 8.0, 0.9, 6.0):  # three of five outside the later range [0, 1]
        study.enqueue_trial({"x": x, "c": "a"})
    study.optimize(objective(10.0), n_trials=5)
    study.enqueue_trial({"x": 7.0, "c": "b"})
    running = study.ask()  # a busy point outside the later range
    running.suggest_float("x", 0.0, 10.0)
    running.suggest_categorical("c", ["a", "b"])
    seen: list = []
    real = sampler._engine.suggest

    def spy(space, observed, **kwargs):
        seen.append((space, observed))
        return real(space, observed, **kwargs)

    sampler._engine.suggest = spy
    study.optimize(objective(1.0), n_trials=3)
    # the first trial after the change still reads [0, 10] from the trials before it
    space, observed = seen[-1]
    x = next(p for p in space.params if p.name == "x")
    assert (x.low, x.high) == (0.0, 1.0)
    xs = [c["x"] for c in observed.configs]
    assert {0.5, 0.9} <= set(xs) and len(xs) == 4  # the two old ones inside, two new ones
    assert all(0.0 <= c["x"] <= 1.0 for c in (*observed.configs, *observed.pending))
    assert all(0.0 <= row <= 1.0 for row in space.encode(observed.configs).ravel())
    assert all(0.0 <= t.params["x"] <= 1.0 for t in study.trials[-3:])


def test_the_latest_distribution_wins_and_each_trial_is_checked_against_it() -> None:
    def trial(number: int, x: float, c: str, high: float, choices: tuple) -> object:
        t = create_trial(
            params={"x": x, "c": c},
            distributions={
                "x": FloatDistribution(0.0, high),
                "c": CategoricalDistribution(choices),
            },
            value=0.0,
        )
        t.number = number
        return t

    trials = [
        trial(0, 5.0, "a", 10.0, ("a", "b")),
        trial(2, 0.5, "c", 1.0, ("b", "c")),  # a choice dropped, one added, the range shrunk
        trial(1, 0.2, "b", 10.0, ("a", "b")),
    ]
    space = union_search_space(trials)
    assert space == {"c": CategoricalDistribution(("b", "c")), "x": FloatDistribution(0.0, 1.0)}
    assert [fits_space(t, space) for t in trials] == [False, True, True]


def test_distributions_compare_as_optuna_compares_them() -> None:
    """The fast comparison agrees with Optuna's, NaN choices (equal for Optuna, not for plain
    tuple equality) and ``1`` against ``True`` included."""
    pairs = [
        (
            CategoricalDistribution(("a", float("nan"))),
            CategoricalDistribution(("a", float("nan"))),
        ),
        (CategoricalDistribution(("a", "b")), CategoricalDistribution(("a", "b"))),
        (CategoricalDistribution(("a", "b")), CategoricalDistribution(("b", "a"))),
        (CategoricalDistribution((1, 2)), CategoricalDistribution((True, 2))),
        (FloatDistribution(0.0, 1.0), FloatDistribution(0.0, 1.0)),
        (FloatDistribution(0.0, 1.0), FloatDistribution(0.0, 1.0, log=False, step=0.5)),
        (FloatDistribution(1.0, 2.0), IntDistribution(1, 2)),
        (IntDistribution(1, 8), IntDistribution(1, 8, log=True)),
    ]
    assert [_same(a, b) for a, b in pairs] == [a == b for a, b in pairs]
    assert [a == b for a, b in pairs] == [True, True, False, True, True, False, False, False]


def test_a_single_valued_latest_distribution_leaves_the_space() -> None:
    t = create_trial(params={"n": 3}, distributions={"n": IntDistribution(3, 3)}, value=0.0)
    assert union_search_space([t]) == {}


def test_the_independent_sampler_is_model_based_by_default_and_the_users_wins(sampler_cls) -> None:
    assert isinstance(sampler_cls(seed=0)._independent_sampler, optuna.samplers.TPESampler)
    calls: list[str] = []

    class Recording(optuna.samplers.RandomSampler):
        def sample_independent(self, study, trial, name, dist):
            calls.append(name)
            return super().sample_independent(study, trial, name, dist)

    sampler = sampler_cls(seed=0, n_startup_trials=2, independent_sampler=Recording(seed=0))
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective(1.0), n_trials=3)
    study.optimize(lambda t: objective(1.0)(t) + t.suggest_float("y", 0, 1), n_trials=1)
    assert "y" in calls  # a new parameter's first trial: the user's sampler draws it


def test_the_default_independent_sampler_follows_the_trials_that_used_the_parameter() -> None:
    """TPE's draws concentrate where the parameter did well: the default independent sampler
    learns from the trials, where uniform random would not."""
    sampler = MixboSampler(seed=0)
    study = optuna.create_study(sampler=sampler)
    dist = FloatDistribution(0.0, 1.0)
    for i in range(30):
        x = (i + 0.5) / 30
        study.add_trial(
            create_trial(params={"x": x}, distributions={"x": dist}, value=(x - 0.9) ** 2)
        )
    trial = study.ask()
    draws = [sampler.sample_independent(study, trial, "x", dist) for _ in range(20)]
    assert sum(abs(x - 0.9) < 0.15 for x in draws) >= 12  # uniform: 6 of 20 on average


def test_same_seed_same_suggestions_across_a_range_change(sampler_cls) -> None:
    def params(seed: int) -> list[dict]:
        study = optuna.create_study(sampler=sampler_cls(seed=seed, n_startup_trials=2))
        study.optimize(objective(1.0), n_trials=3)
        study.optimize(lambda t: objective(1.0)(t) + t.suggest_float("y", 0, 1), n_trials=2)
        study.optimize(objective(0.5), n_trials=2)
        return [t.params for t in study.trials]

    assert params(3) == params(3)
