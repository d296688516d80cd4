"""BO-FM beside CoCaBO and TPE on the BO-FM paper's synthetic problems, with the published table.

Best value after ``--trials`` trials over ``--seeds`` seeds (seed = run id), as median and mean ±
standard error, set beside Oh et al. (UAI 2021) as C. Oh's PhD thesis (University of Amsterdam,
2023) reports them in Table 5.1 / App. C.3 (5 runs, mean ± s.e.; their budget is not stated in the
text). Each finished run is appended to ``--out`` (JSON lines), so an interrupted run resumes where
it stopped::

    python benchmarks/bofm_quality.py --trials 200 --seeds 5 --jobs 2 --out bofm_quality.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

# Oh's PhD thesis (Amsterdam, 2023), Table 5.1 / App. C.3: mean ± s.e. over 5 runs.
PUBLISHED = {
    "bofm": {"func2c": (-0.2063, 0.0), "func3c": (-0.7215, 0.0004), "ackley5c": (0.0186, 0.0057)},
    "cocabo": {"func2c": (-0.2025, 0.0018), "func3c": (-0.7202, 0.0016), "ackley5c": (1.37, 0.21)},
    "tpe": {"func2c": (-0.1917, 0.0053), "func3c": (-0.4068, 0.1204), "ackley5c": (1.8601, 0.1248)},
}
PUBLISHED_NAMES = {"bofm": "ModLap", "cocabo": "CoCaBO-0.5", "tpe": "TPE (hyperopt)"}


def _run(task: tuple[str, str, int, int]) -> dict:
    import optuna
    import torch

    from mixbo_compare import run
    from mixbo_compare.problems import get_problem

    torch.set_num_threads(1)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problem, sampler, seed, trials = task
    result = run(get_problem(problem), sampler, seed, trials)
    return {
        "problem": problem,
        "sampler": sampler,
        "seed": seed,
        "trials": trials,
        "best": float(result.values.min()),
        "values": [float(v) for v in result.values],
        "seconds_per_suggestion": result.seconds_per_suggestion,
    }


def _load(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def table(results: list[dict], problems: list[str], samplers: list[str], trials: int) -> str:
    lines = [
        f"best value after {trials} trials: ours = median / mean ± s.e. (n seeds) "
        "[mean s per suggestion]; published = mean ± s.e. over 5 runs",
        "| sampler | " + " | ".join(f"{p} ours | {p} published" for p in problems) + " |",
        "|---|" + "---|---|" * len(problems),
    ]
    for s in samplers:
        cells = []
        for p in problems:
            rows = [r for r in results if r["problem"] == p and r["sampler"] == s]
            rows = [r for r in rows if r["trials"] == trials]
            if rows:
                best = np.array([r["best"] for r in rows])
                se = best.std(ddof=1) / np.sqrt(len(best)) if len(best) > 1 else float("nan")
                secs = np.mean([r["seconds_per_suggestion"] for r in rows])
                cells.append(
                    f"{np.median(best):.4f} / {best.mean():.4f} ± {se:.4f} ({len(best)}) "
                    f"[{secs:.2f}]"
                )
            else:
                cells.append("–")
            pub = PUBLISHED.get(s, {}).get(p)
            cells.append(f"{pub[0]:.4f} ± {pub[1]:.4f}" if pub else "–")
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    named = "; ".join(f"{k} ↔ {v}" for k, v in PUBLISHED_NAMES.items())
    lines.append(f"(published rows: {named})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="func2c,func3c,ackley5c")
    parser.add_argument("--samplers", default="tpe,bofm,cocabo")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default="bofm_quality.jsonl")
    parser.add_argument("--table-only", action="store_true")
    args = parser.parse_args()
    problems, samplers = args.problems.split(","), args.samplers.split(",")
    done = {(r["problem"], r["sampler"], r["seed"], r["trials"]) for r in _load(args.out)}
    # seed-major order, so that an interrupted run has balanced partial results
    tasks = [
        (p, s, seed, args.trials)
        for seed, s, p in itertools.product(range(args.seeds), samplers, problems)
        if (p, s, seed, args.trials) not in done
    ]
    if tasks and not args.table_only:
        with ProcessPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(_run, task) for task in tasks]
            for future in as_completed(futures):
                record = future.result()
                with open(args.out, "a") as f:
                    f.write(json.dumps(record) + "\n")
                print(
                    f"{record['problem']} {record['sampler']} seed {record['seed']}: "
                    f"{record['best']:.4f} ({record['seconds_per_suggestion']:.2f} s/suggestion)",
                    flush=True,
                )
    print(table(_load(args.out), problems, samplers, args.trials))


if __name__ == "__main__":
    main()
