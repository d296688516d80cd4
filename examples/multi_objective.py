"""Two objectives, one minimised and one maximised: the Pareto front of a mixed search space.

python examples/multi_objective.py
"""

import optuna

from optuna_plugins import MixboSampler


def objective(trial: optuna.Trial) -> tuple[float, float]:
    """A made-up model: wider layers are more accurate but slower; "gelu" helps both."""
    width = trial.suggest_int("width", 16, 256, log=True)
    act = trial.suggest_categorical("act", ["relu", "tanh", "gelu"])
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    error = 64 / width + {"relu": 0.3, "tanh": 0.5, "gelu": 0.0}[act] + abs(lr - 3e-3) * 20
    speed = 1000 / width - (act != "gelu")
    return error, speed


if __name__ == "__main__":
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = MixboSampler(seed=0)  # each suggestion: its own random scalarisation (ParEGO)
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=sampler)
    study.optimize(objective, n_trials=40)
    print(f"best trials (the Pareto front), {len(study.best_trials)} of {len(study.trials)}:")
    for trial in sorted(study.best_trials, key=lambda t: t.values[0]):
        error, speed = trial.values
        print(f"  error {error:.3f}  speed {speed:6.2f}  {trial.params}")
