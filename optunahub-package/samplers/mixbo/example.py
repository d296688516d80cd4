"""A mixed search space (a log-float, an integer, a categorical) tuned by MixboSampler, loaded
through OptunaHub. Run from the repository: ``python optunahub-package/samplers/mixbo/example.py``
(or, once registered, with ``optunahub.load_module("samplers/mixbo")``)."""

import math
from pathlib import Path

import optuna
import optunahub


def objective(trial: optuna.Trial) -> float:
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    layers = trial.suggest_int("layers", 1, 4)
    activation = trial.suggest_categorical("activation", ["relu", "gelu", "tanh"])
    return (math.log10(lr) + 3) ** 2 + abs(layers - 2) + (activation != "gelu")


if __name__ == "__main__":
    registry = Path(__file__).resolve().parents[2]  # the folder that holds samplers/mixbo
    module = optunahub.load_local_module("samplers/mixbo", registry_root=str(registry))
    study = optuna.create_study(sampler=module.MixboSampler(seed=0))
    study.optimize(objective, n_trials=30)
    print(study.best_trial.value, study.best_trial.params)
