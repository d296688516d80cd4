"""Both adapters on the one engine: the same answers, no repeats, no false alarms, early errors."""

from __future__ import annotations

import logging

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import create_trial

pytest.importorskip("ray.tune")

from ray import tune  # noqa: E402

from common.log import warn  # noqa: E402
from optuna_plugins import (  # noqa: E402
    BOFMSampler,
    CasmopolitanSampler,
    CoCaBOSampler,
    MixboSampler,
)
from ray_plugins import BOFMSearch, CasmopolitanSearch, CoCaBOSearch, MixboSearch  # noqa: E402

PAIRS = {
    "cocabo": (CoCaBOSampler, CoCaBOSearch),
    "casmopolitan": (CasmopolitanSampler, CasmopolitanSearch),
    "bofm": (BOFMSampler, BOFMSearch),
    "mixbo": (MixboSampler, MixboSearch),
}
DISTRIBUTIONS = {  # the same space in both frameworks, parameters in sorted order
    "act": CategoricalDistribution(["relu", "gelu", "tanh"]),
    "layers": IntDistribution(1, 4),
    "lr": FloatDistribution(1e-4, 1e-1, log=True),
    "x": FloatDistribution(-2.0, 2.0),
}
TUNE_SPACE = {
    "act": tune.choice(["relu", "gelu", "tanh"]),
    "layers": tune.randint(1, 5),
    "lr": tune.loguniform(1e-4, 1e-1),
    "x": tune.uniform(-2.0, 2.0),
}
CATEGORIES = {"a": ["x", "y", "z"], "b": [0, 1], "c": [True, False]}  # 12 configurations


def loss(config: dict) -> float:
    return (config["x"] - 0.3) ** 2 + config["layers"] / 4 + (config["act"] != "gelu")


def suggest_all(trial: optuna.Trial) -> dict:
    return {
        "act": trial.suggest_categorical("act", ["relu", "gelu", "tanh"]),
        "layers": trial.suggest_int("layers", 1, 4),
        "lr": trial.suggest_float("lr", 1e-4, 1e-1, log=True),
        "x": trial.suggest_float("x", -2.0, 2.0),
    }


def observations(n: int = 12) -> list[tuple[dict, float]]:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=11))
    study.optimize(lambda t: loss(suggest_all(t)), n)
    return [(t.params, t.value) for t in study.trials]


@pytest.mark.parametrize("name", PAIRS)
def test_optuna_and_ray_give_the_same_suggestion_for_the_same_history_and_seed(name) -> None:
    sampler_cls, searcher_cls = PAIRS[name]
    seen = observations()
    study = optuna.create_study(sampler=sampler_cls(seed=5, n_startup_trials=8))
    for params, value in seen:
        study.add_trial(create_trial(params=params, distributions=DISTRIBUTIONS, value=value))
    from_optuna = study.ask().relative_params
    searcher = searcher_cls(TUNE_SPACE, metric="loss", mode="min", seed=5, n_startup_trials=8)
    for params, value in seen:
        searcher.add_evaluated_point(params, value)
    from_ray = searcher.suggest("next")
    assert set(from_optuna) == set(from_ray) == set(DISTRIBUTIONS)
    assert from_optuna["act"] == from_ray["act"] and from_optuna["layers"] == from_ray["layers"]
    assert from_optuna["x"] == pytest.approx(from_ray["x"], rel=1e-9, abs=1e-12)
    assert from_optuna["lr"] == pytest.approx(from_ray["lr"], rel=1e-9)


def _categorical(trial: optuna.Trial) -> float:
    a, b, c = (trial.suggest_categorical(k, v) for k, v in CATEGORIES.items())
    return {"x": 0.0, "y": 1.0, "z": 2.0}[a] + b + c


@pytest.mark.parametrize("name", PAIRS)
def test_no_sampler_repeats_a_configuration_while_a_free_one_exists(name, optuna_logs) -> None:
    study = optuna.create_study(sampler=PAIRS[name][0](seed=0, n_startup_trials=4))
    study.optimize(_categorical, n_trials=12)
    configs = [tuple(t.params.values()) for t in study.trials]
    assert len(set(configs)) == 12  # the whole space, once each
    assert not optuna_logs.records  # a sequential study has no one to race with
    study.optimize(_categorical, n_trials=3)  # beyond the space: said once
    said = [r.getMessage() for r in optuna_logs.records]
    assert len(said) == 1 and "every configuration of the search space" in said[0]


@pytest.mark.parametrize("name", PAIRS)
def test_no_searcher_repeats_a_configuration_while_a_free_one_exists(name) -> None:
    space = {k: tune.choice(v) for k, v in CATEGORIES.items()}
    searcher = PAIRS[name][1](space, metric="loss", mode="min", seed=0, n_startup_trials=4)
    configs = []
    for i in range(12):
        config = searcher.suggest(str(i))
        searcher.on_trial_complete(str(i), {"loss": float(len(configs))})
        configs.append(tuple(config.values()))
    assert len(set(configs)) == 12


def test_a_conditional_space_is_modelled_without_warnings(optuna_logs) -> None:
    def svm_or_tree(trial: optuna.Trial) -> float:
        kind = trial.suggest_categorical("classifier", ["svm", "tree"])
        if kind == "svm":
            return abs(trial.suggest_float("C", 1e-3, 1e3, log=True) - 1.0)
        return abs(trial.suggest_int("max_depth", 1, 10) - 4) / 10

    study = optuna.create_study(sampler=CasmopolitanSampler(seed=0, n_startup_trials=5))
    study.optimize(svm_or_tree, n_trials=40)
    assert not optuna_logs.records  # no race, no independent sampling, no exhausted space
    assert study.best_value <= 0.01  # max_depth 4 (0.0) or C within 1% of 1


def test_workers_sampling_during_the_design_raise_no_conditional_space_alarm(optuna_logs) -> None:
    # Another process's trials that are running but not yet sampled (their parameters unknown)
    # count towards the start-up design exactly as they do for the independent-sampling warning.
    study = optuna.create_study(sampler=CoCaBOSampler(seed=0, n_startup_trials=10))
    study.optimize(lambda t: loss(suggest_all(t)), 8)
    study.ask(), study.ask()  # asked by other workers, nothing sampled yet
    trial = study.ask()
    assert set(trial.relative_params) == set(DISTRIBUTIONS)  # the model's design, not random
    suggest_all(trial)
    assert not optuna_logs.records


def test_an_infinite_value_is_said_once_in_ray(ray_logs) -> None:
    searcher = CoCaBOSearch(TUNE_SPACE, metric="loss", mode="min", seed=0, n_startup_trials=2)
    for i in range(6):
        config = searcher.suggest(str(i))
        value = float("inf") if i == 1 else loss(config)
        searcher.on_trial_complete(str(i), {"loss": value})
    assert len([r for r in ray_logs.records if "infinite" in r.getMessage()]) == 1


# ------------------------------------------------------------------------ bad input, early
@pytest.mark.parametrize("side", [0, 1], ids=["optuna", "ray"])
@pytest.mark.parametrize(
    "name, options, message",
    [
        ("bofm", {"seed": "abc"}, "seed must be a non-negative integer or None"),
        ("cocabo", {"seed": -3}, "seed must be"),
        ("casmopolitan", {"n_startup_trials": -1}, "n_startup_trials must be an integer"),
        ("cocabo", {"kappa": -1.0}, "kappa must be a finite number"),
        ("cocabo", {"horizon": 0}, "horizon must be an integer >= 1"),
        ("casmopolitan", {"acquisition": "pi"}, "acquisition must be one of"),
        ("casmopolitan", {"failure_tolerance": 0}, "failure_tolerance must be an integer"),
        ("bofm", {"max_path_values": 1}, "max_path_values must be an integer >= 2"),
        ("bofm", {"pending": "liar"}, "pending must be one of"),
    ],
)
def test_bad_arguments_fail_at_construction_saying_what_is_expected(
    side, name, options, message
) -> None:
    with pytest.raises(ValueError, match=message):
        PAIRS[name][side](**options)


# ---------------------------------------------------------------------------- core logging
def _warning_strategy(sampler_or_searcher) -> None:
    strategy = sampler_or_searcher._strategy
    inner = strategy.suggest

    def suggest(*args):
        warn("a warning from the core")
        return inner(*args)

    strategy.suggest = suggest


def test_core_warnings_obey_optunas_verbosity(capture_logs) -> None:
    caplog = capture_logs("optuna", logging.DEBUG)
    try:
        for verbosity in (optuna.logging.ERROR, optuna.logging.WARNING):
            optuna.logging.set_verbosity(verbosity)
            sampler = CoCaBOSampler(seed=0, n_startup_trials=2)
            _warning_strategy(sampler)
            study = optuna.create_study(sampler=sampler)
            study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    finally:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
    said = [
        (r.name, r.levelno) for r in caplog.records if r.getMessage() == "a warning from the core"
    ]
    assert said == [("optuna.mixbo", logging.WARNING)]  # silent under ERROR, heard under WARNING


def test_core_warnings_reach_rays_logger(ray_logs) -> None:
    searcher = CoCaBOSearch(TUNE_SPACE, metric="loss", mode="min", seed=0, n_startup_trials=1)
    _warning_strategy(searcher)
    for i in range(3):
        config = searcher.suggest(str(i))
        searcher.on_trial_complete(str(i), {"loss": loss(config)})
    said = [r for r in ray_logs.records if r.getMessage() == "a warning from the core"]
    assert len(said) == 1 and said[0].name == "ray.tune.search.mixbo"
