"""Pruned trials are observations: imputed values, the start-up rule, Optuna's and Tune's sides."""

from __future__ import annotations

import logging
import pickle

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution
from optuna.trial import TrialState, create_trial

from common.engine import Observations, SuggestionEngine
from common.space.pruned import IMPUTATIONS, can_start, impute
from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler

SAMPLERS = [MixboSampler, CoCaBOSampler, CasmopolitanSampler, BOFMSampler]
DISTRIBUTIONS = {"x": FloatDistribution(0, 1), "c": CategoricalDistribution(["a", "b"])}


# ------------------------------------------------------------------------------------ imputation
COMPLETED_CURVES = [{1: 1.0, 2: 0.8, 3: 0.5}, {1: 1.2, 2: 1.0, 3: 0.7}, {1: 1.4, 2: 1.2, 3: 0.9}]
FINALS = [0.5, 0.7, 0.9]


def imputed(pruned_curves, method):
    values = [*FINALS, *[None] * len(pruned_curves)]
    mask = [False] * 3 + [True] * len(pruned_curves)
    return impute(values, [*COMPLETED_CURVES, *pruned_curves], mask, method)[3:]


def test_rank_puts_pruned_trials_below_every_completed_one_further_first():
    early_good, late_bad, late_good = {1: 0.1}, {1: 2.0, 2: 3.0}, {1: 2.0, 2: 1.5}
    a, b, c = imputed([early_good, late_bad, late_good], "rank")
    assert min(a, b, c) > max(FINALS)
    assert c < b < a  # further is better; then the better last value


def test_quantile_matches_the_rank_at_the_step_to_the_final_values():
    (middle, worst, beyond) = imputed([{1: 1.2, 2: 1.0}, {1: 1.4, 2: 1.2}, {2: 1.6}], "quantile")
    assert middle == pytest.approx(0.7) and worst == pytest.approx(0.9)
    assert beyond > 0.9  # worse than every completed trial at step 2: extrapolated
    (best,) = imputed([{2: 0.1}], "quantile")
    assert best >= min(FINALS)  # never better than the best completed trial


def test_quantile_falls_back_to_rank_without_completed_reports_at_the_step():
    assert imputed([{7: 0.3}], "quantile") == imputed([{7: 0.3}], "rank")


def test_last_ignore_and_a_trial_pruned_before_reporting():
    assert imputed([{1: 2.0, 2: 1.5}], "last") == [1.5]
    assert imputed([{1: 2.0}], "ignore") == [None]
    for method in IMPUTATIONS:
        assert imputed([{}], method) == [None]


def test_the_model_starts_from_a_completed_trial_or_two_pruned_ones():
    assert can_start(1, 0) and can_start(0, 2)
    assert not can_start(0, 1)


def test_the_engine_flips_maximised_curves_and_marks_pruned_rows():
    engine = SuggestionEngine(
        MixboSampler()._engine.method, name="T", logger=logging.getLogger("t"), seed=0
    )
    history = engine.history(
        Observations(
            [{"x": 0.1}, {"x": 0.2}, {"x": 0.3}],
            [0.9, 0.5, None],
            maximize=True,
            curves=[{1: 0.3, 2: 0.9}, {1: 0.2, 2: 0.5}, {1: 0.1}],
            pruned=[False, False, True],
        )
    )
    assert list(history.pruned) == [False, False, True] and history.n_pruned == 1
    assert history.values[2] > history.values[1] > history.values[0]  # worst when minimised


# ------------------------------------------------------------------------------------ Optuna
def study_with(sampler, pruned: bool) -> optuna.Study:
    """Completed trials along x (better towards 1) and, if ``pruned``, trials near x = 1 pruned
    with bad intermediate values."""
    study = optuna.create_study(sampler=sampler)
    for x in (0.0, 0.15, 0.3, 0.45, 0.6, 0.7):
        for c in "ab":
            v = (x - 1) ** 2 + (c == "b") * 0.5
            study.add_trial(
                create_trial(
                    params={"x": x, "c": c},
                    distributions=DISTRIBUTIONS,
                    value=v,
                    intermediate_values={1: v + 1.0, 2: v + 0.5, 3: v + 0.2},
                )
            )
    if pruned:
        for x in (0.82, 0.88, 0.94, 1.0):
            study.add_trial(
                create_trial(
                    params={"x": x, "c": "a"},
                    distributions=DISTRIBUTIONS,
                    state=TrialState.PRUNED,
                    intermediate_values={1: 2.5, 2: 2.4},
                )
            )
    return study


@pytest.mark.parametrize("sampler_cls", SAMPLERS)
def test_a_pruned_trial_changes_the_next_suggestion_and_its_region_is_avoided(sampler_cls):
    without = study_with(sampler_cls(seed=0, n_startup_trials=5), pruned=False).ask(DISTRIBUTIONS)
    with_ = study_with(sampler_cls(seed=0, n_startup_trials=5), pruned=True).ask(DISTRIBUTIONS)
    assert without.params["x"] > 0.8  # the completed trials point towards x = 1
    assert with_.params["x"] < 0.8  # where the pruned trials say it is bad


def sources(sampler) -> list[str]:
    """The source of each suggestion the sampler's engine makes from now on."""
    seen: list[str] = []
    suggest = sampler._engine.suggest

    def spy(*args, **kwargs):
        suggestion = suggest(*args, **kwargs)
        seen.append(suggestion.source)
        return suggestion

    sampler._engine.suggest = spy
    return seen


@pytest.mark.parametrize("sampler_cls", SAMPLERS)
def test_the_start_up_design_counts_pruned_trials(sampler_cls):
    sampler = sampler_cls(seed=0, n_startup_trials=4)
    seen = sources(sampler)
    study = optuna.create_study(sampler=sampler)

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0, 1)
        trial.suggest_categorical("c", ["a", "b"])
        trial.report(x, 1)
        raise optuna.TrialPruned()  # every trial pruned after one report

    study.optimize(objective, n_trials=7)
    assert all(t.state == TrialState.PRUNED for t in study.trials)
    # trial 0 has no search space yet (Optuna samples it independently); trials 1-3 complete
    # the design of 4, then the model runs on the pruned trials (before: random for ever)
    assert seen == ["design"] * 3 + ["model"] * 3


def test_a_study_that_prunes_before_any_report_warns_once_that_the_model_cannot_start(
    optuna_logs,
):
    sampler = MixboSampler(seed=0, n_startup_trials=3)
    seen = sources(sampler)
    study = optuna.create_study(sampler=sampler)

    def objective(trial: optuna.Trial) -> float:
        trial.suggest_float("x", 0, 1)
        trial.suggest_categorical("c", ["a", "b"])
        raise optuna.TrialPruned()

    study.optimize(objective, n_trials=8)
    said = [r for r in optuna_logs.records if "cannot start" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
    assert set(seen) == {"design"}
    params = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(params)) == len(params)  # pruned configurations are taken


# ------------------------------------------------------------------------------------ Ray Tune
def test_ray_trials_stopped_early_are_modelled_as_pruned_not_at_full_budget():
    pytest.importorskip("ray.tune")
    from ray import tune

    from ray_plugins import MixboSearch

    searcher = MixboSearch(
        {"x": tune.uniform(0, 1), "c": tune.choice(["a", "b"])},
        metric="loss",
        mode="min",
        seed=0,
        n_startup_trials=3,
    )
    finals = {}
    for i, (final, stop) in enumerate([(0.5, 10), (0.7, 10), (0.9, 10), (None, 2)]):
        tid = f"t{i}"
        searcher.suggest(tid)
        curve = [2.0 - 0.1 * s for s in range(1, 11)] if final is None else None
        for step in range(1, stop + 1):
            loss = curve[step - 1] if curve else final + 1.0 / step
            searcher.on_trial_result(tid, {"loss": loss, "training_iteration": step})
        finals[tid] = loss
        searcher.on_trial_complete(tid, {"loss": loss, "training_iteration": stop})
    history = searcher.history()
    assert list(history.pruned) == [False, False, False, True]
    assert history.values[3] != pytest.approx(finals["t3"])  # not its last value as a final one
    assert history.values[3] > max(history.values[:3])  # worse than the completed ones
    restored = pickle.loads(pickle.dumps(searcher))
    assert np.array_equal(restored.history().values, history.values)
    assert list(restored.history().pruned) == list(history.pruned)
    assert searcher.suggest("t4") == restored.suggest("t4")


def test_ray_points_given_as_pruned_are_modelled_from_their_intermediate_values():
    pytest.importorskip("ray.tune")
    from ray import tune

    from ray_plugins import MixboSearch

    searcher = MixboSearch({"x": tune.uniform(0, 1)}, metric="loss", mode="min", seed=0)
    searcher.add_evaluated_point({"x": 0.1}, 0.5)
    searcher.add_evaluated_point({"x": 0.2}, 0.6)
    searcher.add_evaluated_point({"x": 0.9}, 9.0, pruned=True, intermediate_values=[3.0, 2.0])
    history = searcher.history()
    assert list(history.pruned) == [False, False, True]
    assert history.values[2] > 0.6


@pytest.mark.parametrize("n_startup_trials", [0, 10])
def test_a_ray_point_given_as_pruned_without_values_is_not_modelled_but_taken(n_startup_trials):
    pytest.importorskip("ray.tune")
    from ray import tune

    from ray_plugins import MixboSearch

    space = {"a": tune.choice(["p", "q", "r"]), "b": tune.choice([0])}
    searcher = MixboSearch(
        space, metric="loss", mode="min", seed=0, n_startup_trials=n_startup_trials
    )
    searcher.add_evaluated_point({"a": "p", "b": 0}, 0.5)
    searcher.add_evaluated_point({"a": "q", "b": 0}, None, pruned=True)  # stopped before a report
    assert len(searcher.history()) == 1
    for seed in range(5):  # whatever the seed, the one free configuration
        searcher._engine._base_seed = seed
        assert searcher.suggest(f"t{seed}")["a"] == "r"
        searcher.on_trial_complete(f"t{seed}", error=True)  # frees it again
