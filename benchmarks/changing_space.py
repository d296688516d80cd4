"""A study whose float range changes mid-way: mixbo beside Optuna's TPE and GP samplers.

Each study asks ``x = suggest_float("x", 0, 1)`` and a two-way categorical ``c`` for the first
``--before`` trials, then ``suggest_float("x", 0, 10)`` for ``--after`` more. Two objectives:
``inside`` has its optimum at x = 0.37 (inside the first range), ``beyond`` at x = 6.3 (reachable
only after the change); both add 0.2 when ``c == "b"``. The script prints, per objective and
sampler, the median (and quartiles) over ``--seeds`` seeds of the best value of the study::

    python benchmarks/changing_space.py --seeds 5 --jobs 2
"""

from __future__ import annotations

import argparse
import itertools
from concurrent.futures import ProcessPoolExecutor

import numpy as np

OPTIMA = {"inside": 0.37, "beyond": 6.3}
SAMPLERS = ("mixbo", "tpe", "gp")


def _sampler(name: str, seed: int):
    import optuna

    from optuna_plugins import MixboSampler

    if name == "mixbo":
        return MixboSampler(seed=seed)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed)
    return optuna.samplers.GPSampler(seed=seed)


def _run(task: tuple[str, str, int, int, int]) -> float:
    """The best value of one study."""
    import optuna
    import torch

    torch.set_num_threads(1)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    objective_name, sampler, seed, before, after = task
    optimum = OPTIMA[objective_name]

    def objective(high: float):
        def f(trial: optuna.Trial) -> float:
            x = trial.suggest_float("x", 0.0, high)
            c = trial.suggest_categorical("c", ["a", "b"])
            return (x - optimum) ** 2 + 0.2 * (c == "b")

        return f

    study = optuna.create_study(sampler=_sampler(sampler, seed))
    study.optimize(objective(1.0), n_trials=before)
    study.optimize(objective(10.0), n_trials=after)
    return float(study.best_value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--before", type=int, default=30)
    parser.add_argument("--after", type=int, default=40)
    parser.add_argument("--samplers", default=",".join(SAMPLERS))
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    samplers = args.samplers.split(",")
    tasks = [
        (objective, sampler, seed, args.before, args.after)
        for objective, sampler, seed in itertools.product(OPTIMA, samplers, range(args.seeds))
    ]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = dict(zip(tasks, pool.map(_run, tasks), strict=True))
    print(f"best value after {args.before} + {args.after} trials, {args.seeds} seeds")
    print(f"{'objective':<9} {'sampler':<6} {'median':>9} {'q25':>9} {'q75':>9}")
    for objective, sampler in itertools.product(OPTIMA, samplers):
        best = [
            results[(objective, sampler, s, args.before, args.after)] for s in range(args.seeds)
        ]
        q25, median, q75 = np.percentile(best, [25, 50, 75])
        print(f"{objective:<9} {sampler:<6} {median:9.5f} {q25:9.5f} {q75:9.5f}")


if __name__ == "__main__":
    main()
