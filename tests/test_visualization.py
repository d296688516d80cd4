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
