"""Seconds per suggestion of mixbo's samplers against Optuna's GPSampler, measured in one run.

Each sampler runs one sequential study on the same space and objective; the time of every
``study.ask`` is recorded, and the median over the asks near 25, 50 and 100 completed trials is
printed with its ratio to the baseline (GPSampler, with greenlet installed if available).

``--prefilled`` measures at large checkpoints without running the whole study with every sampler:
for each checkpoint N, one history of N random trials (the same for every sampler) is copied into a
fresh study, a *new* sampler is created and asked ``--asks`` + 1 times (each answer told before the
next ask): the first ask is the **cold** cost (the first mixbo worker on a study: nothing fitted
yet; the median over three new samplers, each on its own copy), the median of the others the
**warm** cost (the sampler's own caches in use), with their
mean and their **max**: where the first ask does not fit a model (CASMOPOLITAN's first ask on a
history of random trials is a trust-region restart, centred by a GP of a few points), the first
model fit on the whole history comes on a later ask, and the max shows it. Then one more
new sampler joins and asks once (three in turn, the median): the **join** cost (a new worker
process, a restarted job, on a study where a worker of its kind already ran; mixbo's samplers
adopt the fits stored with the study's trials, GPSampler stores none).

    python benchmarks/latency.py                       # 9-parameter mixed space, all samplers
    OMP_NUM_THREADS=1 python benchmarks/latency.py --prefilled --checkpoints 100,500,1000 \
        --samplers cocabo,casmopolitan,bofm,mixbo,gp
    python benchmarks/latency.py --space cat25 --samplers cocabo,casmopolitan,gp
    python benchmarks/latency.py --samplers bofm,cocabo,gp --checkpoints 25,50,100,200 --cpu
    OMP_NUM_THREADS=1 python benchmarks/latency.py --prefilled --checkpoints 100 \
        --space mixed9-2obj --samplers mixbo,gp   # two objectives

``--out docs/runs/latency`` appends the rows to that folder's ``latency.csv`` with the command's
provenance; ``python -m mixbo_compare.pages`` makes it a page (:mod:`mixbo_compare.report_latency`).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time

import numpy as np
import optuna

from mixbo_compare import SAMPLERS, provenance, report_latency

CHECKPOINTS = (25, 50, 100)
WINDOW = 2  # asks with completed trials in [c - WINDOW, c + WINDOW] count for checkpoint c


def mixed9(trial: optuna.Trial) -> float:
    """4 float, 2 int and 3 five-way categorical parameters (a typical tuning space)."""
    x = [trial.suggest_float(f"x{i}", -5.0, 5.0) for i in range(3)]
    lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
    n = trial.suggest_int("n", 0, 20)
    m = trial.suggest_int("m", 1, 64, log=True)
    c = [trial.suggest_categorical(f"c{i}", ["a", "b", "c", "d", "e"]) for i in range(3)]
    return (
        sum(v * v for v in x)
        + (math.log10(lr) + 3) ** 2
        + (n - 7) ** 2 / 10
        + math.log2(m)
        + sum(ch != "c" for ch in c)
    )


def cat25(trial: optuna.Trial) -> float:
    """25 categorical parameters of 5 choices each (the size of Pest Control)."""
    return float(
        sum((trial.suggest_categorical(f"h{i}", list(range(5))) - i % 5) ** 2 for i in range(25))
    )


def ackley53(trial: optuna.Trial) -> float:
    """Ackley-53: 50 binary categorical and 3 float parameters (CASMOPOLITAN's mixed benchmark)."""
    from common.space.mixed_space import Categorical
    from mixbo_compare.problems import get_problem

    problem = get_problem("ackley53")
    params = {
        p.name: trial.suggest_categorical(p.name, p.choices)
        if isinstance(p, Categorical)
        else trial.suggest_float(p.name, p.low, p.high)
        for p in problem.space.params
    }
    return problem(params)


def mixed9_two(trial: optuna.Trial) -> tuple[float, float]:
    """Two objectives on mixed9's space: its value, and a cost that wants the opposite ``m``,
    ``x0`` and first category (a multi-objective study)."""
    value = mixed9(trial)
    p = trial.params
    return value, (p["x0"] + 2) ** 2 + 6 - math.log2(p["m"]) + (p["c0"] != "a")


SPACES = {"mixed9": mixed9, "cat25": cat25, "ackley53": ackley53, "mixed9-2obj": mixed9_two}


def new_study(sampler: optuna.samplers.BaseSampler, objective) -> optuna.Study:
    """A study for ``objective``: minimising each of its objectives."""
    directions = ["minimize", "minimize"] if objective is mixed9_two else ["minimize"]
    return optuna.create_study(sampler=sampler, directions=directions)


def measure(
    sampler_name: str, objective, n_trials: int, seed: int, checkpoints=CHECKPOINTS, clock=None
) -> dict[int, float]:
    clock = clock or time.perf_counter
    gc.collect()  # the previous sampler's garbage is not this one's cost
    study = new_study(SAMPLERS[sampler_name](seed), objective)
    times: dict[int, list[float]] = {c: [] for c in checkpoints}
    for completed in range(n_trials):
        start = clock()
        trial = study.ask()
        value = objective(trial)  # parameters are sampled lazily inside suggest_*
        elapsed = clock() - start
        study.tell(trial, value)
        for c in checkpoints:
            if abs(completed - c) <= WINDOW:
                times[c].append(elapsed)
    return {c: float(np.median(v)) for c, v in times.items() if v}


def prefilled_history(objective, n_trials: int, seed: int) -> list[optuna.trial.FrozenTrial]:
    """``n_trials`` completed trials of random search on ``objective`` (the shared history)."""
    study = new_study(optuna.samplers.RandomSampler(seed=seed), objective)
    study.optimize(objective, n_trials=n_trials)
    return study.trials


# A cold or join cost is one ask, as noisy as one timing is: each is the median of this many, the
# cold asks each by a new sampler on its own copy of the study.
REPEATS = 3


def measure_prefilled(
    sampler_name: str, objective, history, seed: int, asks: int, clock
) -> tuple[float, float, float, float, float]:
    """(cold, warm median, warm mean, warm max, join) seconds of new samplers on a study that
    holds ``history``: cold and join are medians of :data:`REPEATS` first asks, the warm asks
    continue the first cold sampler's study."""

    def timed_ask(study: optuna.Study) -> float:
        start = clock()
        trial = study.ask()
        value = objective(trial)
        elapsed = clock() - start
        study.tell(trial, value)
        return elapsed

    cold = []
    for r in reversed(range(REPEATS)):  # the last one, with the sampler's own seed, goes on
        gc.collect()  # the previous sampler's garbage is not this one's cost
        study = new_study(SAMPLERS[sampler_name](seed + 100 * r), objective)
        study.add_trials(history)
        cold.append(timed_ask(study))
    warm = [timed_ask(study) for _ in range(asks)]
    join = []
    for r in range(REPEATS):  # new workers join the study the first one ran in
        study.sampler = SAMPLERS[sampler_name](seed + 1 + r)
        join.append(timed_ask(study))
    return (
        float(np.median(cold)),
        float(np.median(warm)),
        float(np.mean(warm)),
        max(warm),
        float(np.median(join)),
    )


def warm_up(names: list[str], objective, seed: int) -> float:
    """Import both sides' numerical modules once, and let every sampler make one model-based
    suggestion on a small throwaway study so that the modules its suggestion path imports lazily
    (scipy, botorch's acquisition functions, sympy through torch's shape checks) are loaded
    before anything is timed: a cold ask then measures the fit, not the first sampler's imports.
    Returns the seconds it took (a new worker process pays them once)."""
    import importlib

    start = time.perf_counter()
    for module in ("torch", "gpytorch", "botorch", "optuna._gp.gp", "optuna._gp.optim_mixed"):
        importlib.import_module(module)
    for module in (
        "common.methods.cocabo.strategy",
        "common.methods.casmopolitan.strategy",
        "common.methods.bofm.strategy",
        "common.methods.mixbo",
    ):
        importlib.import_module(module)
    history = prefilled_history(objective, 12, seed)
    for name in names:
        study = new_study(SAMPLERS[name](seed), objective)
        study.add_trials(history)
        trial = study.ask()
        study.tell(trial, objective(trial))
    return time.perf_counter() - start


def main_prefilled(args, names: list[str], checkpoints: tuple[int, ...], clock) -> None:
    seconds = warm_up(names, SPACES[args.space], args.seed)
    print(f"imports and a first suggestion of each sampler on 12 trials: {seconds:.2f} s once")
    baseline = names[-1]
    kind = "CPU seconds" if args.cpu else "seconds"
    print(
        f"space={args.space}  {kind} per suggestion after N random trials: cold (a new sampler's"
        f" first ask) / warm (median, mean and max of its next {args.asks}) / join (a second"
        f" new sampler's first ask after those); ratio to {baseline}"
    )
    print("| N | sampler | cold | warm | warm mean | warm max | join | ratios (same order) |")
    print("|---|---|---|---|---|---|---|---|")
    stored = []
    for n in checkpoints:
        history = prefilled_history(SPACES[args.space], n, args.seed)
        rows = {
            name: measure_prefilled(name, SPACES[args.space], history, args.seed, args.asks, clock)
            for name in names
        }
        base = rows[baseline]
        for name, row in rows.items():
            cells = " | ".join(f"{v:.3f}" for v in row)
            ratios = " / ".join(f"{v / b:.2f}" for v, b in zip(row, base, strict=True))
            print(f"| {n} | {name} | {cells} | {ratios} |", flush=True)
            times = dict(zip(report_latency.TIMES, row, strict=True))
            about = " ".join(SPACES[args.space].__doc__.split("\n\n")[0].split()).rstrip(".")
            stored.append({"space": args.space, "about": about, "n": n, "sampler": name, **times})
    if args.out:
        store(args.out, stored, "CPU seconds" if args.cpu else "wall-clock seconds")


def store(folder: str, rows: list[dict], clock: str) -> None:
    """Add ``rows`` to ``folder``'s ``latency.csv`` (a page of ``docs/results`` when the
    folder is in ``docs/runs``), replacing any earlier row of the same space, size and sampler,
    and record the command's provenance."""
    os.makedirs(folder, exist_ok=True)
    old = report_latency.load(folder) if os.path.exists(os.path.join(folder, "latency.csv")) else []
    new = [{**row, "clock": clock} for row in rows]
    measured = {(r["space"], r["n"], r["sampler"]) for r in new}
    kept = [r for r in old if (r["space"], r["n"], r["sampler"]) not in measured]
    report_latency.write(folder, kept + new)
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    stamp = provenance.collect(f"OMP_NUM_THREADS={threads} python " + " ".join(sys.argv), jobs=1)
    previous = provenance.read(folder)
    if previous and stamp["command"] not in previous["command"].split(" && "):
        stamp["command"] = previous["command"] + " && " + stamp["command"]
    elif previous:  # the same command again: the folder's command stays what it was
        stamp["command"] = previous["command"]
    provenance.write(folder, stamp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--space", choices=list(SPACES), default="mixed9")
    parser.add_argument("--samplers", default="cocabo,gp", help="comma-separated; baseline last")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoints", default=",".join(map(str, CHECKPOINTS)))
    parser.add_argument(
        "--cpu", action="store_true", help="CPU time of this process (for a loaded machine)"
    )
    parser.add_argument(
        "--prefilled",
        action="store_true",
        help="cold and warm cost of a new sampler joining a study of N random trials",
    )
    parser.add_argument("--asks", type=int, default=4, help="warm asks per checkpoint (prefilled)")
    parser.add_argument(
        "--out", help="with --prefilled: append the rows to OUT/latency.csv (docs/runs/NAME)"
    )
    args = parser.parse_args()
    checkpoints = tuple(int(c) for c in args.checkpoints.split(","))
    clock = time.process_time if args.cpu else time.perf_counter
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    names = [s for s in args.samplers.split(",") if s]
    if args.prefilled:
        main_prefilled(args, names, checkpoints, clock)
        return
    n_trials = max(checkpoints) + WINDOW + 1
    results = {
        name: measure(name, SPACES[args.space], n_trials, args.seed, checkpoints, clock)
        for name in names
    }
    baseline, last = names[-1], max(checkpoints)
    kind = "CPU seconds" if args.cpu else "seconds"
    print(f"space={args.space}  {kind} per suggestion (median of asks within ±{WINDOW} trials)")
    print("| sampler | " + " | ".join(f"{c} trials" for c in checkpoints) + f" | ratio @{last} |")
    print("|---|" + "---|" * (len(checkpoints) + 1))
    for name in names:
        row = results[name]
        ratio = row[last] / results[baseline][last]
        cells = " | ".join(f"{row[c]:.3f}" for c in checkpoints)
        print(f"| {name} | {cells} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
