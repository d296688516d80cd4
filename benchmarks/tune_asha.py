"""Ray Tune with ASHA: MixboSearch against OptunaSearch (TPE) on a learning-curve problem.

A real ``Tuner`` runs ``--samples`` trials of a learning-curve problem
(:mod:`mixbo_compare.problems.learning_curves`), one at a time on one CPU; the trainable reports the
problem's value after each step as ``loss`` (with Tune's ``training_iteration``) and
``ASHAScheduler(max_t=steps, grace_period=1, reduction_factor=3)`` stops trials early. The searcher
sees each stopped trial end through ``on_trial_complete``; ours models it as a pruned trial. Prints
one JSON line per (searcher, seed): the best final loss among the trials that ran all their steps,
how many did, the total steps, and each trial's steps and final loss (``None`` if stopped early) in
the order the trials started, from which the best at equal total steps follows.

    nice -n 10 python benchmarks/tune_asha.py --problem lc-powerlaw --samples 40 --seeds 3
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from typing import Any


def tune_space(problem: Any) -> dict[str, Any]:
    """The problem's mixed space as Tune domains."""
    from ray import tune

    from common.space.mixed_space import Categorical, Float

    out: dict[str, Any] = {}
    for p in problem.space.params:
        if isinstance(p, Categorical):
            out[p.name] = tune.choice(list(p.choices))
        elif isinstance(p, Float):
            out[p.name] = (tune.loguniform if p.log else tune.uniform)(p.low, p.high)
        else:
            out[p.name] = (tune.lograndint if p.log else tune.randint)(p.low, p.high + 1)
    return out


def searcher(name: str, seed: int, space: dict[str, Any]) -> Any:
    if name == "mixbo":
        from ray_plugins import MixboSearch

        return MixboSearch(space, metric="loss", mode="min", seed=seed)
    import optuna
    from ray.tune.search.optuna import OptunaSearch

    return OptunaSearch(
        space, metric="loss", mode="min", sampler=optuna.samplers.TPESampler(seed=seed)
    )


def one_run(problem_name: str, name: str, seed: int, samples: int) -> dict[str, Any]:
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    from mixbo_compare.problems import get_problem

    problem = get_problem(problem_name)

    def trainable(config: dict[str, Any]) -> None:
        from ray.tune import report

        for value in get_problem(problem_name).curve(config):
            report({"loss": float(value)})

    tuner = tune.Tuner(
        tune.with_resources(trainable, {"cpu": 1}),
        tune_config=tune.TuneConfig(
            search_alg=searcher(name, seed, tune_space(problem)),
            scheduler=ASHAScheduler(
                metric="loss", mode="min", max_t=problem.steps, grace_period=1, reduction_factor=3
            ),
            num_samples=samples,
            max_concurrent_trials=1,
            reuse_actors=True,
        ),
        run_config=tune.RunConfig(storage_path=tempfile.mkdtemp(prefix="tune_asha_"), verbose=0),
    )
    results = tuner.fit()
    full, steps, trials = [], 0, []
    for result in sorted(results, key=lambda r: r.metrics["trial_id"]):  # in the order started
        ran = int(result.metrics.get("training_iteration", 0))
        steps += ran
        final = float(result.metrics["loss"]) if ran >= problem.steps else None
        if final is not None:
            full.append(final)
        trials.append([ran, final])
    return {
        "problem": problem_name,
        "searcher": name,
        "seed": seed,
        "samples": samples,
        "best_full": min(full) if full else None,
        "n_full": len(full),
        "steps": steps,
        "trials": trials,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="lc-powerlaw")
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--searchers", nargs="+", default=["mixbo", "tpe"])
    args = parser.parse_args()
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    import ray

    ray.init(num_cpus=1, include_dashboard=False, logging_level="ERROR")
    for seed in range(args.seeds):
        for name in args.searchers:
            print(json.dumps(one_run(args.problem, name, seed, args.samples)), flush=True)


if __name__ == "__main__":
    main()
