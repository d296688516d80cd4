"""Swap one line: Optuna's default sampler -> mixbo's MixboSampler on a mixed search space.

python examples/quickstart.py
"""

import math

import optuna

from optuna_plugins import MixboSampler


def objective(trial: optuna.Trial) -> float:
    optimizer = trial.suggest_categorical("optimizer", ["sgd", "adam", "rmsprop"])
    activation = trial.suggest_categorical("activation", ["relu", "tanh", "gelu", "silu"])
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    dropout = trial.suggest_float("dropout", 0.0, 0.6)
    layers = trial.suggest_int("layers", 1, 6)
    # A made-up validation loss with interactions between the categorical and numeric choices.
    best_lr = {"sgd": 3e-2, "adam": 1e-3, "rmsprop": 3e-4}[optimizer]
    loss = (math.log10(lr) - math.log10(best_lr)) ** 2
    loss += (dropout - (0.1 if activation == "relu" else 0.3)) ** 2 * 4
    loss += (
        0.05 * (layers - 4) ** 2 + {"relu": 0.1, "tanh": 0.3, "gelu": 0.0, "silu": 0.05}[activation]
    )
    return loss


if __name__ == "__main__":
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=MixboSampler(seed=0))  # the one line that changes
    study.optimize(objective, n_trials=60)
    print(f"best value {study.best_value:.4f} with {study.best_params}")
