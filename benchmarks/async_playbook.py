"""PLAyBOOK on simulated asynchronous workers against Kriging believer, no penalisation and Optuna.

k workers evaluate trials whose runtimes are half-normal with mean 1 (simulated, no waiting); each
free worker asks for a new configuration while the other k − 1 are busy. For each problem and k the
script prints, per sampler: the median best value at the end, the simulated time at which the
median best-so-far curve first reaches the *target* (the best final median value of Optuna's
asynchronous samplers, TPE with constant liar and GPSampler), that time as a fraction of the
Optuna sampler's own run, how many seeds' own runs reach the target within 70% of that run (the
median curve of a handful of seeds swings with one seed: many of these problems are won or lost on
finding one category combination), and the rate of duplicate / near-duplicate suggestions (same
categories and every continuous column within 1% of its range of an earlier trial's).

    python benchmarks/async_playbook.py --problems func3c,pest,bbob-mixint-f10-d10 \
        --workers 4,8 --seeds 3 --trials 60 --jobs 2 --cache /tmp/async_runs.jsonl

With ``--cache``, every finished run is appended as one JSON line and reused by later calls with
the same problem, sampler, k, seed and trials (an interrupted run resumes; reports combine runs).
"""

from __future__ import annotations

import argparse
import itertools
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from mixbo_compare.run_cache import load_runs, record_run

# name -> (mixbo sampler class, keyword arguments); Optuna's samplers are in compare.SAMPLERS
VARIANTS: dict[str, tuple[str, dict]] = {
    "cocabo-playbook": ("CoCaBOSampler", {}),
    "cocabo-playbook-lp": ("CoCaBOSampler", {"penalizer": "lp"}),
    "cocabo-kb": ("CoCaBOSampler", {"pending": "kriging_believer"}),
    "cocabo-none": ("CoCaBOSampler", {"pending": "ignore"}),
    "casmopolitan-playbook": ("CasmopolitanSampler", {}),
    "casmopolitan-kb": ("CasmopolitanSampler", {"pending": "kriging_believer"}),
    "casmopolitan-none": ("CasmopolitanSampler", {"pending": "ignore"}),
    "bofm-playbook": ("BOFMSampler", {}),
    "bofm-kb": ("BOFMSampler", {"pending": "kriging_believer"}),
    "bofm-none": ("BOFMSampler", {"pending": "ignore"}),
}
OPTUNA_ASYNC = ("tpe-cl", "gp")


def _factory(name: str):
    import optuna_plugins
    from mixbo_compare import SAMPLERS

    if name in VARIANTS:
        cls, kwargs = VARIANTS[name]
        return lambda seed: getattr(optuna_plugins, cls)(seed=seed, **kwargs)
    return SAMPLERS[name]


def near_duplicate_rate(space, params: list[dict]) -> float:
    """Fraction of trials within 1% (continuous) and equal (categorical) of an earlier trial."""
    X = space.encode([p for p in params if p])
    cont, cat = list(space.cont_dims), list(space.cat_dims)
    count = 0
    for i in range(1, len(X)):
        same_cat = np.all(X[:i, cat] == X[i, cat], axis=1) if cat else np.ones(i, bool)
        close = np.all(np.abs(X[:i, cont] - X[i, cont]) <= 0.01, axis=1) if cont else True
        count += bool(np.any(same_cat & close))
    return count / max(len(X) - 1, 1)


def _one(task: tuple[str, str, int, int, int]) -> dict:
    import optuna

    from mixbo_compare import run
    from mixbo_compare.problems import get_problem

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem_name, sampler, k, seed, trials = task
    problem = get_problem(problem_name)
    result = run(problem, _factory(sampler), seed, trials, workers=k)
    order = np.argsort(result.end_times)
    values = np.where(np.isnan(result.true_values), np.inf, result.true_values)[order]
    return {
        "problem": problem_name,
        "sampler": sampler,
        "k": k,
        "seed": seed,
        "trials": trials,
        "times": result.end_times[order].tolist(),
        "best": np.minimum.accumulate(values).tolist(),
        "dup": near_duplicate_rate(problem.space, result.params),
        "secs": result.seconds_per_suggestion,
    }


def _task_of(r: dict) -> tuple:
    return (r["problem"], r["sampler"], r["k"], r["seed"], r["trials"])


def _median_curve(runs: list[dict], grid: np.ndarray) -> np.ndarray:
    curves = []
    for r in runs:
        idx = np.searchsorted(r["times"], grid, side="right") - 1
        curves.append(np.where(idx >= 0, np.asarray(r["best"])[np.maximum(idx, 0)], np.inf))
    return np.median(np.asarray(curves), axis=0)


def report(results: list[dict]) -> None:
    keys = sorted({(r["problem"], r["k"]) for r in results})
    for problem, k in keys:
        rows = [r for r in results if r["problem"] == problem and r["k"] == k]
        horizon = max(r["times"][-1] for r in rows)
        grid = np.linspace(0.0, horizon, 2001)
        samplers = list(dict.fromkeys(r["sampler"] for r in rows))
        curves = {s: _median_curve([r for r in rows if r["sampler"] == s], grid) for s in samplers}
        ends = {s: np.median([r["times"][-1] for r in rows if r["sampler"] == s]) for s in samplers}
        baselines = [s for s in samplers if s in OPTUNA_ASYNC]
        target_sampler = min(baselines, key=lambda s: curves[s][-1]) if baselines else None
        target = curves[target_sampler][-1] if target_sampler else np.nan
        print(f"\n### {problem}, k = {k} workers (target {target:.5g}, from {target_sampler})")
        print(
            "| sampler | median final best | time to target | fraction of target's run "
            "| seeds at target by 70% | near-duplicates | s/suggestion |"
        )
        print("|---|---|---|---|---|---|---|")
        deadline = 0.7 * ends[target_sampler] if target_sampler else np.nan
        for s in samplers:
            runs = [r for r in rows if r["sampler"] == s]
            hit = np.flatnonzero(curves[s] <= target)
            t = grid[hit[0]] if len(hit) else np.inf
            frac = t / ends[target_sampler] if target_sampler else np.nan
            early = sum(_time_to(r, target) <= deadline for r in runs)
            dup = np.mean([r["dup"] for r in runs])
            secs = np.mean([r["secs"] for r in runs])
            print(
                f"| {s} | {curves[s][-1]:.5g} | {t:.1f} | {frac:.2f} | {early}/{len(runs)} "
                f"| {dup:.1%} | {secs:.2f} |"
            )


def _time_to(run: dict, target: float) -> float:
    """When one run's best-so-far first reaches ``target`` (inf if never)."""
    hit = np.flatnonzero(np.asarray(run["best"]) <= target)
    return run["times"][hit[0]] if len(hit) else np.inf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="func3c,pest,bbob-mixint-f10-d10")
    parser.add_argument("--samplers", default="cocabo-playbook,cocabo-kb,cocabo-none,tpe-cl,gp")
    parser.add_argument("--workers", default="4,8")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cache", default=None, help="JSON-lines file of finished runs")
    args = parser.parse_args()
    tasks = list(
        itertools.product(
            args.problems.split(","),
            args.samplers.split(","),
            [int(k) for k in args.workers.split(",")],
            range(args.seeds),
            [args.trials],
        )
    )
    done = load_runs(args.cache, _task_of)
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(_one, t) for t in tasks if t not in done]
        for future in as_completed(futures):
            r = future.result()
            done[_task_of(r)] = r
            record_run(args.cache, r)
            print(
                f"{r['problem']} {r['sampler']} k={r['k']} seed {r['seed']}: "
                f"{r['best'][-1]:.5g} ({r['secs']:.2f} s/suggestion)",
                flush=True,
            )
    print(f"\n{args.seeds} seeds, {args.trials} trials, half-normal runtimes of mean 1")
    report([done[t] for t in tasks])


if __name__ == "__main__":
    main()
