"""Best value reached by each sampler on benchmark problems: median over seeds, one table.

    python benchmarks/quality.py --problems func2c,func3c --samplers cocabo,tpe,random \
        --seeds 5 --trials 100 --jobs 2
"""

from __future__ import annotations

import argparse
import itertools
from concurrent.futures import ProcessPoolExecutor

import numpy as np


def _best(args: tuple[str, str, int, int]) -> tuple[str, str, int, float, float]:
    import optuna

    from mixbo_compare import run
    from mixbo_compare.problems import get_problem

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem, sampler, seed, trials = args
    result = run(get_problem(problem), sampler, seed, trials)
    return problem, sampler, seed, float(result.values.min()), result.seconds_per_suggestion


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="func2c,func3c")
    parser.add_argument("--samplers", default="cocabo,tpe,random")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    problems, samplers = args.problems.split(","), args.samplers.split(",")
    tasks = list(itertools.product(problems, samplers, range(args.seeds), [args.trials]))
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(_best, tasks))
    print(
        f"median (min, max) best value over {args.seeds} seeds at {args.trials} trials; "
        "s/suggestion in brackets"
    )
    print("| sampler | " + " | ".join(problems) + " |")
    print("|---|" + "---|" * len(problems))
    for s in samplers:
        cells = []
        for p in problems:
            rows = [r for r in results if r[0] == p and r[1] == s]
            best = np.array([r[3] for r in rows])
            secs = np.mean([r[4] for r in rows])
            cells.append(f"{np.median(best):.4f} ({best.min():.4f}, {best.max():.4f}) [{secs:.2f}]")
        print(f"| {s} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
