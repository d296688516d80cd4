"""Compare samplers on your own objective: four Optuna objectives of the kinds users write, and
how to compare mixbo's sampler with Optuna's on one of them.

Each objective stands in for training code (a toy "network": learning rate, depth, activation,
dropout) and runs in microseconds. From the command line::

    mixbo-compare --objective examples/compare_objectives.py:plain -s mixbo tpe gp -n 30 --seeds 5
    mixbo-compare --objective examples/compare_objectives.py:pruned --pruner median -n 40
    mixbo-compare --objective examples/compare_objectives.py:constrained -n 30
    mixbo-compare --objective examples/compare_objectives.py:accuracy_and_size \\
        --directions maximize minimize -n 30

Run as a script, it does the first of these from Python and prints the table.
"""

from __future__ import annotations

import argparse
import math

import optuna

ACTIVATIONS = {"relu": 0.05, "gelu": 0.0, "tanh": 0.1, "sigmoid": 0.3}


def _network(trial: optuna.Trial) -> tuple[float, int, float, float]:
    lr = trial.suggest_float("lr", 1e-5, 1.0, log=True)
    layers = trial.suggest_int("layers", 1, 8)
    activation = trial.suggest_categorical("activation", list(ACTIVATIONS))
    dropout = trial.suggest_float("dropout", 0.0, 0.6)
    return lr, layers, ACTIVATIONS[activation], dropout


def _final_loss(lr: float, layers: int, shift: float, dropout: float) -> float:
    return (math.log10(lr) + 2.5) ** 2 / 4 + 0.08 * (layers - 5) ** 2 + shift + (dropout - 0.2) ** 2


def plain(trial: optuna.Trial) -> float:
    """Validation loss of a configuration (minimise)."""
    return _final_loss(*_network(trial))


def pruned(trial: optuna.Trial) -> float:
    """The same loss reached epoch by epoch, reported for a pruner: fast learning rates improve
    early and level off, so curves cross."""
    lr, layers, shift, dropout = _network(trial)
    final = _final_loss(lr, layers, shift, dropout)
    speed = min(1.0, lr * 30)
    loss = final + 3.0
    for epoch in range(20):
        loss = final + 3.0 * (1 - speed) ** (epoch + 1) * (1 + 0.05 * layers)
        trial.report(loss, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    return loss


def constrained(trial: optuna.Trial) -> float:
    """The loss under a memory budget: feasible while ``layers * (1 - dropout)`` ≤ 3.5, which
    excludes the unconstrained optimum (set on the trial, as Optuna's constrained samplers read
    it)."""
    lr, layers, shift, dropout = _network(trial)
    trial.set_constraint("memory", layers * (1 - dropout) - 3.5)
    return _final_loss(lr, layers, shift, dropout)


def accuracy_and_size(trial: optuna.Trial) -> tuple[float, float]:
    """Two objectives: accuracy (maximise) and model size (minimise)."""
    lr, layers, shift, dropout = _network(trial)
    accuracy = 1 / (1 + _final_loss(lr, layers, shift, dropout))
    return accuracy, layers * 1.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()

    from mixbo_compare import compare

    table = compare(plain, samplers=("mixbo", "tpe"), n_trials=args.trials, seeds=args.seeds)
    for row in table:
        print(f"{row['sampler']:>6} seed {row['seed']}: best value {row['best_value']:.4g}")


if __name__ == "__main__":
    main()
