"""CASMOPOLITAN's failure tolerance: the dimension rule against the reference's 40 (and baselines).

Runs ``CasmopolitanSampler`` with each failure-tolerance variant (``ours``: the default,
``max(4, d_cont)`` for the box and ``max(4, d_cat)`` for the Hamming ball; ``ref40``:
the reference code's 40 for both; ``turbo``: TuRBO's ``d`` for both;
``third``: ``clip(ceil(d / 3), 3, 20)``; ``sqrt``: ``clip(ceil(sqrt(d)), 2, 10)``, an
earlier default, for both) and,
optionally, registered samplers (``--baselines cocabo,tpe,random``) on the same problems and seeds,
then prints the median best value per problem and, per variant, on how many seeds it beat ``ref40``.
Results go one JSON line per run to ``--cache`` (if given), so an interrupted run resumes.

    python benchmarks/casmopolitan_tolerance.py --problems pest,contamination,ackley53 \
        --variants ours,ref40 --baselines cocabo,tpe,random --seeds 5 --trials 150 --jobs 2 \
        --cache /tmp/casmopolitan_runs.jsonl
"""

from __future__ import annotations

import argparse
import itertools
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from mixbo_compare.run_cache import load_runs, record_run

VARIANTS = {"ours": None, "ref40": 40, "turbo": "dim", "third": "dim/3", "sqrt": "sqrt"}


def _one(task: tuple[str, str, int, int]) -> dict:
    import optuna

    from mixbo_compare import run
    from mixbo_compare.problems import get_problem
    from optuna_plugins import CasmopolitanSampler

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem_name, name, seed, trials = task
    problem = get_problem(problem_name)
    if name in VARIANTS:
        tol = VARIANTS[name]
        if tol == "dim":
            tol = problem.space.dim
        elif tol == "sqrt":
            tol = int(min(10, max(2, np.ceil(np.sqrt(problem.space.dim)))))
        elif tol == "dim/3":
            tol = int(min(20, max(3, np.ceil(problem.space.dim / 3))))
        sampler = lambda s: CasmopolitanSampler(seed=s, failure_tolerance=tol)  # noqa: E731
    else:
        sampler = name
    result = run(problem, sampler, seed, trials)
    values = np.asarray(result.values, dtype=float)
    return {
        "problem": problem_name,
        "sampler": name,
        "seed": seed,
        "trials": trials,
        "best": float(np.nanmin(values)),
        "best_at_100": float(np.nanmin(values[:100])),
        "seconds_per_suggestion": float(result.seconds_per_suggestion),
    }


def _task_of(r: dict) -> tuple:
    return (r["problem"], r["sampler"], r["seed"], r["trials"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="pest,contamination,ackley53")
    parser.add_argument("--variants", default="ours,ref40")
    parser.add_argument("--baselines", default="")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=150)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cache", default=None, help="JSON-lines file of finished runs")
    args = parser.parse_args()
    problems = [p for p in args.problems.split(",") if p]
    variants = [v for v in args.variants.split(",") if v]
    names = variants + [b for b in args.baselines.split(",") if b]
    done = load_runs(args.cache, _task_of)
    tasks = [
        t
        for t in itertools.product(problems, names, range(args.seeds), [args.trials])
        if t not in done
    ]
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        futures = [pool.submit(_one, t) for t in tasks]
        for future in as_completed(futures):
            r = future.result()
            done[_task_of(r)] = r
            record_run(args.cache, r)
            print(
                f"{r['problem']:>14} {r['sampler']:>8} seed {r['seed']}: {r['best']:.4f} "
                f"({r['seconds_per_suggestion']:.2f} s/suggestion)",
                flush=True,
            )

    def rows(problem: str, name: str) -> list[dict]:
        return sorted(
            (done[(problem, name, s, args.trials)] for s in range(args.seeds)),
            key=lambda r: r["seed"],
        )

    print(
        f"\nmedian best value over {args.seeds} seeds at {args.trials} trials "
        "(min, max) [mean s/suggestion]; minimised"
    )
    print("| sampler | " + " | ".join(problems) + " |")
    print("|---|" + "---|" * len(problems))
    for name in names:
        cells = []
        for p in problems:
            best = np.array([r["best"] for r in rows(p, name)])
            secs = np.mean([r["seconds_per_suggestion"] for r in rows(p, name)])
            cells.append(f"{np.median(best):.4f} ({best.min():.4f}, {best.max():.4f}) [{secs:.2f}]")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if "ref40" in variants:
        print("\nseeds (same seed, same start-up design) on which each variant beat / tied ref40")
        for name in variants:
            if name == "ref40":
                continue
            cells = []
            for p in problems:
                ours = np.array([r["best"] for r in rows(p, name)])
                ref = np.array([r["best"] for r in rows(p, "ref40")])
                wins, ties = int(np.sum(ours < ref - 1e-9)), int(np.sum(np.abs(ours - ref) <= 1e-9))
                cells.append(f"{p}: {wins}/{ties}/{len(ref)}")
            print(f"  {name}: " + ", ".join(cells))


if __name__ == "__main__":
    main()
