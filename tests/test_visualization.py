"""Optuna's plots work on studies our samplers ran, after the README's install (plotly comes with
the ``compare`` extra)."""

from __future__ import annotations

import optuna
import pytest

from optuna_plugins import MixboSampler

pytest.importorskip("plotly")


@pytest.fixture(scope="module")
def study() -> optuna.Study:
    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 1e-3, 1.0, log=True)
        c = trial.suggest_categorical("c", ["a", "b"])
        return x + (c == "a")

    study = optuna.create_study(sampler=MixboSampler(seed=0, n_startup_trials=4))
    study.optimize(objective, n_trials=8)
    return study


@pytest.mark.parametrize(
    "plot", ["plot_optimization_history", "plot_slice", "plot_parallel_coordinate"]
)
def test_optunas_plots_draw_a_study_of_ours(study: optuna.Study, plot: str) -> None:
    figure = getattr(optuna.visualization, plot)(study)
    assert figure.data  # drew the study's trials


def test_the_pareto_front_plot_draws_the_best_trials_of_a_multi_objective_study() -> None:
    def objective(trial: optuna.Trial) -> tuple[float, float]:
        x = trial.suggest_float("x", 0.0, 1.0)
        c = trial.suggest_categorical("c", ["a", "b"])
        return x + (c == "a"), (1 - x) ** 2 + (c == "a")

    sampler = MixboSampler(seed=0, n_startup_trials=4)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    study.optimize(objective, n_trials=8)
    figure = optuna.visualization.plot_pareto_front(study)
    front = sorted(t.values[0] for t in study.best_trials)
    assert front and sorted(figure.data[-1].x) == front  # the last trace: the Pareto front
