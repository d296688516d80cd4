"""Many worker processes on one real database: duplicates, lost trials, errors and wall time.

Each of ``--workers`` spawned processes loads one shared study from the storage with its own
seeded mixbo sampler and runs ``--trials / --workers`` trials of a cheap objective. The space is
finite on purpose (a stepped float, an integer, a categorical: 17 x 9 x 3 = 459 configurations),
so that two workers picking the same configuration is a real risk, not a floating-point accident.
Afterwards the study must hold exactly the expected trials, all COMPLETE, each configuration once,
each reported by exactly one worker. Without ``--storage`` a throwaway PostgreSQL server is
started (``benchmarks/postgres.py``).

    nice -n 10 python benchmarks/storage_workers.py --workers 8 --trials 200
    nice -n 10 python benchmarks/storage_workers.py --storage sqlite:///study.db --workers 4
"""

from __future__ import annotations

import argparse
import collections
import logging
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import optuna

SAMPLERS = ("cocabo", "casmopolitan", "bofm", "mixbo")


def objective(trial: optuna.Trial) -> float:
    """A cheap mixed objective over 459 configurations."""
    x = trial.suggest_float("x", -2.0, 2.0, step=0.25)
    n = trial.suggest_int("n", 0, 8)
    c = trial.suggest_categorical("c", ["a", "b", "c"])
    return (x - 0.5) ** 2 + abs(n - 3) / 4 + (c != "b")


def _sampler(name: str, seed: int, n_startup_trials: int) -> optuna.samplers.BaseSampler:
    import optuna_plugins

    classes = {
        "cocabo": optuna_plugins.CoCaBOSampler,
        "casmopolitan": optuna_plugins.CasmopolitanSampler,
        "bofm": optuna_plugins.BOFMSampler,
        "mixbo": optuna_plugins.MixboSampler,
    }
    return classes[name](seed=seed, n_startup_trials=n_startup_trials)


def storage(url: str) -> optuna.storages.RDBStorage:
    """An RDB storage for the URL (SQLite with a generous lock timeout for many writers)."""
    kwargs = {"connect_args": {"timeout": 120}} if url.startswith("sqlite") else {}
    return optuna.storages.RDBStorage(url, engine_kwargs=kwargs)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.levelname}: {record.getMessage()}")


def worker(url: str, study_name: str, name: str, seed: int, n_trials: int, startup: int) -> dict:
    """One worker process: its trial numbers, the warnings it logged and its wall time."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.logging.disable_default_handler()
    collect = _Collect()
    logging.getLogger("optuna").addHandler(collect)
    study = optuna.load_study(
        study_name=study_name, storage=storage(url), sampler=_sampler(name, seed, startup)
    )
    numbers: list[int] = []
    start = time.perf_counter()
    study.optimize(objective, n_trials=n_trials, callbacks=[lambda s, t: numbers.append(t.number)])
    return {
        "numbers": numbers,
        "warnings": collect.messages,
        "seconds": time.perf_counter() - start,
    }


@dataclass
class Outcome:
    """What a multi-process run left in the storage, and what its workers said."""

    n_trials: int
    states: dict[str, int]
    duplicates: list[tuple]
    overlaps: list[str]  # per duplicated configuration: its trials' numbers and time spans
    lost: list[int]  # trial numbers not reported by exactly one worker
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def ok(self, expected: int) -> bool:
        complete = self.states.get("COMPLETE", 0)
        return self.n_trials == complete == expected and not self.duplicates and not self.lost


def run_workers(
    url: str, name: str, n_workers: int, n_trials: int, startup: int = 10, seed: int = 0
) -> Outcome:
    """Run ``n_trials`` trials (split evenly) over ``n_workers`` spawned processes on ``url``."""
    study_name = f"workers-{name}-{seed}-{time.time_ns()}"
    optuna.create_study(study_name=study_name, storage=storage(url))
    share = [n_trials // n_workers + (i < n_trials % n_workers) for i in range(n_workers)]
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(n_workers, mp_context=context) as pool:
        futures = [
            pool.submit(worker, url, study_name, name, seed + i, k, startup)
            for i, k in enumerate(share)
        ]
        reports = [f.result() for f in futures]
    seconds = time.perf_counter() - start
    trials = optuna.load_study(study_name=study_name, storage=storage(url)).trials
    configs = [tuple(sorted(t.params.items())) for t in trials]
    counts = collections.Counter(configs)
    told = collections.Counter(n for r in reports for n in r["numbers"])
    return Outcome(
        n_trials=len(trials),
        states=dict(collections.Counter(t.state.name for t in trials)),
        duplicates=sorted(c for c, k in counts.items() if k > 1),
        overlaps=[
            _spans([t for t, c in zip(trials, configs, strict=True) if c == d])
            for d, k in counts.items()
            if k > 1
        ],
        lost=sorted(t.number for t in trials if told[t.number] != 1)
        + sorted(n for n in told if n >= len(trials)),
        warnings=[w for r in reports for w in r["warnings"]],
        seconds=seconds,
    )


def _spans(trials: list[optuna.trial.FrozenTrial]) -> str:
    """Trial numbers with start and completion times (seconds from the first start)."""
    t0 = min(t.datetime_start for t in trials)
    return ", ".join(
        f"#{t.number} {(t.datetime_start - t0).total_seconds():.1f}-"
        f"{(t.datetime_complete - t0).total_seconds():.1f}s"
        for t in trials
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", help="an RDB URL; default: a throwaway PostgreSQL server")
    parser.add_argument("--samplers", default="cocabo,casmopolitan", help=f"from {SAMPLERS}")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--startup", type=int, default=10, help="n_startup_trials per worker")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    server = None
    if args.storage is None:
        from postgres import TemporaryServer

        server = TemporaryServer()
    url = args.storage or server.url
    print(f"{args.workers} workers, {args.trials} trials, storage {url.split(':')[0]}")
    print("| sampler | trials | states | duplicates | lost | warnings | wall s |")
    print("|---|---|---|---|---|---|---|")
    try:
        for name in args.samplers.split(","):
            out = run_workers(url, name, args.workers, args.trials, args.startup, args.seed)
            states = ", ".join(f"{k} {v}" for k, v in sorted(out.states.items()))
            print(
                f"| {name} | {out.n_trials} | {states} | {len(out.duplicates)} | {len(out.lost)} "
                f"| {len(out.warnings)} | {out.seconds:.0f} |",
                flush=True,
            )
            for message in sorted(set(out.warnings)):
                print(f"    {message}")
            for spans in out.overlaps:
                print(f"    same configuration: {spans}")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
