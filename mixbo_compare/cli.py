"""``mixbo-compare``: mixbo's samplers against Optuna's built-in ones and the peers, in one command.

Runs every (problem, sampler, seed, workers) combination with ``runner.run``, sequentially or in
``--jobs`` processes, with a progress bar, and writes into ``--out``:

- ``trials.csv``: one row per trial (value, noise-free value, best so far, simulated start and end
  time, seconds the suggestion took, parameters as JSON);
- ``runs.csv``: one row per run (status ok / failed / skipped, the error, seconds per suggestion);
- ``runs.jsonl``: every finished run with the code version it ran on; a command run again into the
  same folder (after an interruption, or with more seeds or samplers) reuses the runs it holds for
  the same code and runs only the others. A folder kept without it (a page's folder in
  ``docs/runs``, as a clone has it) gets it back from its tables (:func:`restore_runs`); to run
  everything again, write into a new folder;
- ``results.md``: median and IQR of the final regret, mean rank, seconds per suggestion; with
  ``--pruner`` (learning-curve problems), also at equal total steps; for multi-objective
  problems (``mo-*``), the normalised hypervolume instead (higher is better);
- ``convergence_trials_k<k>.png`` (and ``convergence_time_k<k>.png`` for k > 1 workers); for
  multi-objective problems ``convergence_hypervolume_k<k>.png`` and ``pareto_front_k<k>.png``.

A multi-objective problem runs as a study with ``directions``; ``trials.csv`` keeps each trial's
objective vectors (observed and noise-free) and feasibility. A baseline's run (Optuna's samplers,
the peers) is reused from ``runs.jsonl`` as long as the problems and the study loop are unchanged,
whatever happened to mixbo's samplers, so mixbo's rows can be added to a stored comparison
without running the baselines again.

A sampler that raises fails only its own run: the error is recorded and the comparison goes on.
CMA-ES is skipped on problems with categorical parameters (it has none), and a peer whose package
is missing is skipped with the extra to install; the table says so.
Needs the ``compare`` extra (matplotlib, tqdm); without it the command says what to install.

Examples::

    mixbo-compare                                 # defaults: func2c, contamination; 3 seeds
    mixbo-compare -p func3c pest -s cocabo tpe random -n 100 --seeds 5 --jobs 2
    mixbo-compare -p func2c -s cocabo tpe-cl gp --workers 4 -n 60   # simulated async workers
    mixbo-compare -p func2c -s mixbo peers -n 100 --seeds 5      # against CatCMAwM, SMAC3, Ax
    mixbo-compare -p lc-sgd-digits lc-powerlaw -s mixbo tpe gp --pruner median -n 100
    mixbo-compare -p mo-zdt-mixed mo-constrained -s mixbo tpe gp nsga2 random -n 100
    mixbo-compare --report-only mixbo-results     # rebuild table and plots from the CSVs
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib
import importlib.metadata
import json
import logging
import math
import multiprocessing
import os
import shlex
import signal
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from common.runtime import single_thread
from mixbo_compare import (
    provenance,
    report,
    report_suite,
    run_cache,
    runner,
    suites,
    user_study,
)
from mixbo_compare.problems import DESCRIPTIONS, PROBLEMS, get_problem, resolve
from mixbo_compare.problems.problem import MultiObjectiveProblem, Problem
from mixbo_compare.problems.user_objective import (
    ObjectiveError,
    UserObjective,
    default_name,
    load_objective,
)
from mixbo_compare.pruners import PRUNERS, SEPARATOR, labelled, unlabelled
from mixbo_compare.run_cache import load_runs, record_run

DEFAULT_PROBLEMS = ("func2c", "contamination")
DEFAULT_SAMPLERS = ("mixbo", "cocabo", "casmopolitan", "bofm", "tpe", "random", "gp")
DEFAULT_SEEDS = 3
DEFAULT_TRIALS = 40
DEFAULT_OUT = "mixbo-results"
RUNS_JSONL = "runs.jsonl"
SUITE_MD = "suite.md"  # a --suite run's page (mixbo_compare.report_suite)
OPTUNA_SAMPLERS = ("random", "tpe", "gp", "cmaes", "nsga2")
EXTRA_MODULES = ("matplotlib", "tqdm")  # the `compare` extra's modules the command needs
_CHEAP = {
    "random",
    "tpe",
    "cmaes",
    "catcmawm",
    "nsga2",
}  # started last when runs are spread over processes


@dataclass(frozen=True)
class Task:
    index: int
    problem: str
    sampler: str
    seed: int
    workers: int
    n_trials: int


@dataclass
class Outcome:
    """What one task produced, as plain rows for the two CSV files."""

    task: Task
    run_row: dict[str, Any]
    trial_rows: list[dict[str, Any]] = field(default_factory=list)

    def record(self, code: str) -> dict[str, Any]:
        """This outcome as a ``runs.jsonl`` record of the code version ``code``."""
        task = {k: getattr(self.task, k) for k in _TASK_KEY}
        return {"code": code, "task": task, "run": self.run_row, "trials": self.trial_rows}


_TASK_KEY = ("problem", "sampler", "seed", "workers", "n_trials")


def resumable(folder: Path, versions: Mapping[str, str]) -> dict[tuple, dict]:
    """The finished ``ok`` runs in ``folder``'s ``runs.jsonl``, by task, of each sampler's current
    version ``versions[sampler]``."""
    runs = load_runs(
        folder / RUNS_JSONL, lambda r: (r.get("code"), *(r["task"][k] for k in _TASK_KEY))
    )

    def current(key: tuple, run: dict) -> bool:
        version = versions.get(run["task"]["sampler"])
        if version is None or run["run"]["status"] != "ok":
            return False
        return key[0] == run_cache.task_version(version, run["task"]["problem"])

    return {key[1:]: r for key, r in runs.items() if current(key, r)}


def restore_runs(folder: Path) -> int:
    """Add to ``runs.jsonl`` the runs of the folder's ``runs.csv``, ``trials.csv`` and
    ``provenance.json`` that it lacks; the number of runs restored.

    A results folder stored without its ``runs.jsonl`` (a page's folder in ``docs/runs``, a fresh
    clone), or beside an older one (whose records are of earlier versions), keeps everything a
    record holds: each ``ok`` row of ``runs.csv`` with its trials, under the provenance's source
    hash (mixbo's samplers) or that baseline's hash. Every run of a folder ran under the hashes of
    the command that wrote its provenance (a comparison reuses runs of the current code only), so
    the restored records are reused exactly when the runs would be: a baseline's while what
    decides its runs is unchanged, mixbo's rows while mixbo's source is.
    """
    tables = [folder / report.RUNS_CSV, folder / report.TRIALS_CSV]
    stamp = provenance.read(folder)
    if stamp is None or not all(p.exists() for p in tables):
        return 0
    recorded = load_runs(
        folder / RUNS_JSONL, lambda r: (r.get("code"), *(r["task"][k] for k in _TASK_KEY))
    )
    baselines = stamp.get("baseline_codes", {})
    trials: dict[tuple, list[dict[str, str]]] = {}
    with open(tables[1], newline="") as f:
        for row in csv.DictReader(f):
            key = (row["problem"], row["sampler"], row["seed"], row["workers"])
            trials.setdefault(key, []).append(row)
    restored = 0
    with open(tables[0], newline="") as f:
        for row in csv.DictReader(f):
            ours = runner.is_ours(row["sampler"])
            code = stamp.get("code") if ours else baselines.get(row["sampler"])
            if row["status"] != "ok" or not code:
                continue
            code = run_cache.task_version(code, row["problem"])
            task = {k: row[k] if k in ("problem", "sampler") else int(row[k]) for k in _TASK_KEY}
            if (code, *(task[k] for k in _TASK_KEY)) in recorded:
                continue
            key = (row["problem"], row["sampler"], row["seed"], row["workers"])
            record = {"code": code, "task": task, "run": row, "trials": trials.get(key, [])}
            record_run(folder / RUNS_JSONL, record)
            restored += 1
    return restored


# ------------------------------------------------------------------------------------ one run
_PROBLEM_CACHE: dict[str, Problem] = {}
_PROGRESS_QUEUE: Any = None
# the user objectives of this command (``--objective``, ``compare``), by the name they are
# reported under; worker processes are given them when they start
USER_OBJECTIVES: dict[str, UserObjective] = {}


def _problem(name: str) -> Problem | UserObjective:
    name, _ = unlabelled(name)  # a pruned study's runs: NAME+PRUNER
    if name in USER_OBJECTIVES:
        return USER_OBJECTIVES[name]
    if name not in _PROBLEM_CACHE:
        _PROBLEM_CACHE[name] = get_problem(name)
    return _PROBLEM_CACHE[name]


def _run_row(task: Task, status: str, **extra: Any) -> dict[str, Any]:
    row = {c: "" for c in report.RUN_COLUMNS}
    row.update(
        problem=task.problem,
        sampler=task.sampler,
        seed=task.seed,
        workers=task.workers,
        status=status,
        n_trials=task.n_trials,
        mixbo=runner.is_ours(task.sampler),
    )
    row.update(extra)
    return row


def _trial_rows(task: Task, result: runner.RunResult) -> list[dict[str, Any]]:
    finished = np.empty(len(result.values), dtype=int)
    finished[result.finish_order] = np.arange(1, len(result.finish_order) + 1)
    best = report.best_so_far(result.true_values[result.finish_order])
    best_at = np.empty(len(result.values))
    best_at[result.finish_order] = best
    rows = []
    for i in range(len(result.values)):
        rows.append(
            {
                "problem": task.problem,
                "sampler": task.sampler,
                "seed": task.seed,
                "workers": task.workers,
                "trial": i,
                "finished": int(finished[i]),
                "state": _state(result, i),
                "value": _num(result.values[i]),
                "true_value": _num(result.true_values[i]),
                "best_true_value": _num(best_at[i]),
                "start_time": _num(result.start_times[i]),
                "end_time": _num(result.end_times[i]),
                "suggest_seconds": f"{result.suggest_seconds[i]:.6f}",
                "params": json.dumps(result.params[i], default=str, sort_keys=True),
                "error": result.errors[i] or "",
                "steps": int(result.steps[i]) if len(result.steps) else "",
                **_objective_columns(result, i),
            }
        )
    return rows


def _objective_columns(result: runner.RunResult, i: int) -> dict[str, str]:
    """A multi-objective trial's observed and noise-free vectors (JSON) and feasibility."""
    if not result.objectives.size or not np.isfinite(result.objectives[i]).all():
        return {"objectives": "", "true_objectives": "", "feasible": ""}
    return {
        "objectives": json.dumps([float(v) for v in result.objectives[i]]),
        "true_objectives": json.dumps([float(v) for v in result.true_objectives[i]]),
        "feasible": str(bool(result.feasible[i])),
    }


def _state(result: runner.RunResult, i: int) -> str:
    if result.errors[i]:
        return "FAIL"
    return "PRUNED" if len(result.pruned) and result.pruned[i] else "COMPLETE"


def _num(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else ""


def execute(task: Task, on_trial: Callable[[int], None] | None = None) -> Outcome:
    """Run one task; never raises: a failure becomes a ``failed`` row with the traceback's end."""
    start = time.perf_counter()
    try:
        problem = _problem(task.problem)
        run = user_study.run_user_objective if isinstance(problem, UserObjective) else runner.run
        result = run(
            problem,  # type: ignore[arg-type]
            task.sampler,
            task.seed,
            task.n_trials,
            workers=task.workers,
            on_trial=on_trial,
            pruner=unlabelled(task.problem)[1],
        )
    except ObjectiveError as exc:  # the user's objective is at fault, not the sampler: one line
        return Outcome(
            task,
            _run_row(
                task,
                "failed",
                error=f"ObjectiveError: {exc}",
                elapsed_seconds=f"{time.perf_counter() - start:.3f}",
            ),
        )
    except Exception as exc:
        tail = "".join(traceback.format_exception(exc)[-3:]).strip()
        return Outcome(
            task,
            _run_row(
                task,
                "failed",
                error=f"{type(exc).__name__}: {exc}\n{tail}",
                elapsed_seconds=f"{time.perf_counter() - start:.3f}",
            ),
        )
    optimum = getattr(problem, "optimum", None)
    normalisation = getattr(problem, "normalisation", None)
    row = _run_row(
        task,
        "ok",
        optimum="" if optimum is None else repr(float(optimum)),
        normalisation="" if normalisation is None else json.dumps(normalisation()),
        directions=json.dumps(problem.directions) if isinstance(problem, UserObjective) else "",
        seconds_per_suggestion=f"{result.seconds_per_suggestion:.6f}",
        elapsed_seconds=f"{time.perf_counter() - start:.3f}",
    )
    return Outcome(task, row, _trial_rows(task, result))


QUIET_PEER_LOGGERS = ("ax",)


def _quiet(verbose: bool) -> None:
    import optuna

    if not verbose:
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        warnings.filterwarnings("ignore", category=UserWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        logging.disable(logging.INFO)  # the peers' progress logs (Ax and SMAC log at INFO)
        # Ax also warns on every fallback of its generation strategy and pandas on its frames:
        # hundreds of lines per run that bury the table (``-v`` shows them)
        for name in QUIET_PEER_LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
        warnings.filterwarnings("ignore", message=".*DataFrame is highly fragmented.*")


def _init_worker(
    queue: Any, verbose: bool, users: Mapping[str, UserObjective] | None = None
) -> None:
    """Set up a worker process: quiet logs, one thread (the processes share the cores), the
    command's user objectives.

    One torch thread and one BLAS thread, for every sampler alike (Optuna's run outside our
    engine's :func:`common.runtime.single_thread`): numpy's and scipy's OpenBLAS start one
    spinning thread per core, and two workers on 2 cores each with two took the default
    comparison 66 s instead of 30."""
    global _PROGRESS_QUEUE
    _PROGRESS_QUEUE = queue
    USER_OBJECTIVES.update(users or {})
    _quiet(verbose)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"  # libraries loaded from here on start with one thread
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS, so that the limit below reaches it)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)  # the libraries already loaded, for the process's lifetime
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass


def _execute_in_worker(task: Task) -> Outcome:
    queue = _PROGRESS_QUEUE
    if queue is None:
        return execute(task)
    return execute(task, on_trial=lambda _n: queue.put(task.index))


# ------------------------------------------------------------------------------------ many runs
def plan(
    problems: Sequence[str],
    samplers: Sequence[str],
    seeds: Sequence[int],
    workers: Sequence[int],
    n_trials: int,
) -> tuple[list[Task], list[Outcome]]:
    """The tasks to run, and the outcomes known without running (skipped, or no problem to run).

    A problem that cannot be built (e.g. its optional package is missing) fails its runs with the
    message naming the extra to install; CMA-ES is skipped on spaces with categoricals.
    """
    tasks: list[Task] = []
    known: list[Outcome] = []
    index = 0
    for p in problems:
        try:
            problem = _problem(p)
            space, error = getattr(problem, "space", None), None
        except Exception as exc:
            problem, space, error = None, None, f"{type(exc).__name__}: {exc}"
        for s in samplers:
            for k in workers:
                for seed in seeds:
                    task = Task(index, p, s, seed, k, n_trials)
                    index += 1
                    if error is not None:
                        known.append(Outcome(task, _run_row(task, "failed", error=error)))
                        continue
                    if isinstance(problem, UserObjective):
                        reason = user_skip_reason(s, problem)
                    elif isinstance(problem, MultiObjectiveProblem) and s in runner.PEERS:
                        reason = f"{s} optimises a single objective"
                    else:
                        reason = runner.skip_reason(s, space)
                    if reason is not None:
                        known.append(Outcome(task, _run_row(task, "skipped", error=reason)))
                    else:
                        tasks.append(task)
    return tasks, known


def user_skip_reason(sampler: str, user: UserObjective) -> str | None:
    """Why ``sampler`` is not run on the user's objective ``user``, or None: a peer that is not
    installed, or several objectives for a peer (they optimise one)."""
    if sampler in runner.UNAVAILABLE or sampler in runner.PEERS and runner.missing(sampler):
        return runner.skip_reason(sampler, None)  # type: ignore[arg-type]  # no space needed
    if sampler in runner.PEERS and user.n_objectives > 1:
        return f"{sampler} optimises a single objective"
    return None


def execute_all(
    tasks: Sequence[Task],
    jobs: int = 1,
    progress: bool = True,
    verbose: bool = False,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run the tasks (in ``jobs`` spawned processes when ``jobs > 1``) with a progress bar.

    Seeds run in order (every run of seed 0, then of seed 1, ...), so an interrupted comparison
    leaves complete seeds; ``on_outcome`` sees each outcome as soon as its run ends.
    """
    from tqdm.auto import tqdm

    order = sorted(tasks, key=lambda t: (t.seed, t.sampler in _CHEAP, t.index))
    total = sum(t.n_trials for t in tasks)
    bar = tqdm(total=total, unit="trial", disable=not progress, dynamic_ncols=True)
    outcomes: list[Outcome] = []

    def keep(outcome: Outcome) -> None:
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)

    try:
        if jobs <= 1 or len(tasks) <= 1:
            with single_thread():  # as in a worker process: the stamp says one thread each
                _execute_here(order, bar, keep)
        else:
            _execute_parallel(order, jobs, bar, verbose, keep)
    finally:
        bar.close()
    return outcomes


def _execute_here(order: Sequence[Task], bar: Any, keep: Callable[[Outcome], None]) -> None:
    """Run ``order``'s tasks one after the other in this process."""
    for task in order:
        bar.set_description(f"{task.problem}/{task.sampler}/seed {task.seed}")
        done = [0]

        def tick(_n: int, done: list[int] = done) -> None:
            done[0] += 1
            bar.update(1)

        keep(execute(task, on_trial=tick))
        bar.update(task.n_trials - done[0])  # the rest of a run that failed early


def _execute_parallel(
    order: Sequence[Task], jobs: int, bar: Any, verbose: bool, keep: Callable[[Outcome], None]
) -> None:
    # spawn, not fork: forking a process that has used torch/OpenMP threads can deadlock.
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    ticks: dict[int, int] = {t.index: 0 for t in order}  # trials reported per task
    closed: set[int] = set()  # finished tasks: their late progress messages are ignored

    def drain() -> None:
        while True:
            try:
                index = queue.get_nowait()
            except Exception:  # queue.Empty
                return
            if index not in closed:
                ticks[index] += 1
                bar.update(1)

    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(queue, verbose, dict(USER_OBJECTIVES)),
    )
    try:
        futures: dict[Future, Task] = {pool.submit(_execute_in_worker, t): t for t in order}
        pending = set(futures)
        bar.set_description(f"{len(order)} runs in {jobs} processes")
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            drain()
            for future in sorted(done, key=lambda f: futures[f].index):
                task = futures[future]
                try:
                    outcome = future.result()
                except Exception as exc:  # a worker process died
                    outcome = Outcome(task, _run_row(task, "failed", error=repr(exc)))
                keep(outcome)
                # the task's last progress messages may still be in flight: count them now
                bar.update(max(task.n_trials - ticks[task.index], 0))
                closed.add(task.index)
    except BaseException:  # interrupted: stop the workers now rather than finish their runs
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


class CsvWriter:
    """Appends each run's rows to ``runs.csv`` and ``trials.csv`` as soon as the run ends."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        for name, columns in (
            (report.RUNS_CSV, report.RUN_COLUMNS),
            (report.TRIALS_CSV, report.TRIAL_COLUMNS),
        ):
            with open(folder / name, "w", newline="") as f:
                csv.DictWriter(f, fieldnames=columns).writeheader()

    def __call__(self, outcome: Outcome) -> None:
        with open(self.folder / report.RUNS_CSV, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=report.RUN_COLUMNS).writerow(outcome.run_row)
        with open(self.folder / report.TRIALS_CSV, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=report.TRIAL_COLUMNS).writerows(outcome.trial_rows)


def write_csvs(folder: Path, outcomes: Sequence[Outcome]) -> None:
    """Write ``runs.csv`` and ``trials.csv``, ordered by task."""
    ordered = sorted(outcomes, key=lambda o: o.task.index)
    with open(folder / report.RUNS_CSV, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=report.RUN_COLUMNS)
        writer.writeheader()
        writer.writerows(o.run_row for o in ordered)
    with open(folder / report.TRIALS_CSV, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=report.TRIAL_COLUMNS)
        writer.writeheader()
        for o in ordered:
            writer.writerows(o.trial_rows)


# ------------------------------------------------------------------------------------ the command
def _missing_extra() -> list[str]:
    """The ``compare`` extra's modules that cannot be imported (after ``pip install mixbo``)."""
    missing = []
    for name in EXTRA_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    return missing


def _expand_samplers(names: Sequence[str]) -> list[str]:
    out: list[str] = []
    for name in (part for item in names for part in item.split(",") if part):
        if name == "all":
            out += runner.names()
        elif name == "peers":
            out += [*runner.PEERS, *runner.UNAVAILABLE]
        elif name == "ours":
            out += [
                s for s in runner.SAMPLERS if runner.is_ours(s) and s not in runner.PRUNED_ABLATION
            ]
        elif name == "optuna":
            out += [s for s in OPTUNA_SAMPLERS if s in runner.SAMPLERS]
        else:
            out.append(name)
    return list(dict.fromkeys(out))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mixbo-compare",
        description="Compare mixbo's samplers with Optuna's built-in ones and the peers (CatCMA "
        "with Margin, SMAC3, Ax) on benchmark problems: "
        "writes a per-trial CSV, a markdown table (median and IQR of the final regret, mean rank, "
        "seconds per suggestion) and PNG convergence plots.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--objective",
        action="append",
        metavar="PATH.py:FUNCTION",
        help="your own Optuna objective (a function of a trial, as study.optimize takes it), "
        "from a file or as package.module:FUNCTION; may be given more than once. It is run "
        "instead of the default problems and reported by the best value found",
    )
    p.add_argument(
        "--directions",
        nargs="+",
        metavar="DIRECTION",
        help="with --objective: minimize or maximize, one per value the objective returns "
        "(default: minimize; several make a multi-objective study, reported by hypervolume)",
    )
    p.add_argument(
        "-p",
        "--problems",
        nargs="+",
        default=None,
        metavar="NAME",
        help=f"problems (default without --objective: {' '.join(DEFAULT_PROBLEMS)}); see "
        "--list; also bbob-mixint-fF-dD (any function and dimension), NAME@N (instance N of "
        "pest, contamination or a bbob-mixint function, e.g. pest@8733) and NAME~K (its "
        "categories relabelled by seed K, e.g. ackley5c~1)",
    )
    p.add_argument(
        "-s",
        "--samplers",
        nargs="+",
        default=None,
        metavar="NAME",
        help=f"samplers (space- or comma-separated), from: {', '.join(runner.names())}; or "
        f"'ours', 'optuna', 'peers', 'all' (default: {' '.join(DEFAULT_SAMPLERS)}; with --suite, "
        f"{' '.join(suites.DEFAULTS['samplers'])})",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=None,
        help=f"number of seeds per sampler (default: {DEFAULT_SEEDS}; with --suite, "
        f"{suites.DEFAULTS['seeds']})",
    )
    p.add_argument(
        "--first-seed", type=int, default=0, help="seeds are first-seed, first-seed+1, …"
    )
    p.add_argument(
        "-n",
        "--trials",
        type=int,
        default=None,
        help=f"trials per run (default: {DEFAULT_TRIALS}; with --suite, "
        f"{suites.DEFAULTS['trials']})",
    )
    p.add_argument(
        "--suite",
        choices=suites.suite_names(),
        help="run the generalisation suite (mixbo_compare/suites.py: problems drawn by a seeded "
        "generator) or its tuning or validation part, instead of the default problems",
    )
    p.add_argument(
        "-k",
        "--workers",
        type=int,
        nargs="+",
        default=[1],
        metavar="K",
        help="simulated asynchronous workers (1 = sequential); several values allowed",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=_available_cores(),
        help="processes to spread the runs over (one torch thread each; default: this machine's "
        "cores)",
    )
    p.add_argument(
        "-o",
        "--out",
        default=None,
        help=f"output folder (created; files in it are overwritten; default: {DEFAULT_OUT}, "
        "or suite-results/SUITE with --suite)",
    )
    p.add_argument(
        "--pruner",
        choices=PRUNERS,
        default="none",
        help="prune the trials of the learning-curve problems (lc-*) and of an --objective that "
        "reports intermediate values: Optuna's MedianPruner (n_startup_trials=5, "
        "n_warmup_steps=2) or HyperbandPruner (1 step to the problem's steps, or Optuna's "
        "estimate for an objective; reduction factor 3); runs are recorded as NAME+PRUNER and "
        "also compared at equal total steps",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print the table at the end")
    p.add_argument("--verbose", action="store_true", help="show Optuna's and samplers' warnings")
    p.add_argument("--list", action="store_true", help="list problems and samplers, then exit")
    p.add_argument("--version", action="version", version=f"%(prog)s {installed_version()}")
    p.add_argument(
        "--report-only",
        metavar="DIR",
        help="rebuild results.md and the plots from the CSVs in DIR; run nothing",
    )
    return p


def installed_version() -> str:
    """mixbo's installed version: ``pyproject.toml``'s ``version``, the one place it is written."""
    try:
        return importlib.metadata.version("mixbo")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that is not installed
        return "(not installed: no version)"


def _available_cores() -> int:
    """The cores this process may run on (what a container allows, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    command = "mixbo-compare" + (" " + shlex.join(argv) if argv else "")
    if args.list:
        _print_list()
        return 0
    missing = _missing_extra()
    if missing:
        print(
            f"mixbo-compare needs {' and '.join(missing)}, which come with its extra: "
            "pip install 'mixbo[compare]'",
            file=sys.stderr,
        )
        return 1
    if args.report_only:
        md, pngs = report.write_report(args.report_only)
        print(f"wrote {md} and {len(pngs)} plot(s)")
        return 0
    _fill_defaults(args)
    samplers = _expand_samplers(args.samplers)
    unknown = [s for s in samplers if s not in runner.names()]
    if unknown:
        parser().error(
            f"unknown sampler(s) {', '.join(unknown)}; choose from "
            f"{', '.join(runner.names())}, ours, optuna, peers, all"
        )

    for name in args.problems:
        try:
            resolve(unlabelled(name)[0])
            if "~" in name:  # a conditional problem has no relabelled form
                get_problem(name)
        except ValueError as err:
            parser().error(str(err))
    if args.seeds < 1 or args.trials < 1 or args.jobs < 1 or min(args.workers) < 1:
        parser().error("--seeds, --trials, --jobs and --workers must be at least 1")
    try:
        users = user_objectives(args.objective or [], args.directions, args.problems)
    except ObjectiveError as err:
        print(f"mixbo-compare: error: {err}", file=sys.stderr)
        return 2
    if users and args.pruner != "none" and any(u.n_objectives > 1 for u in users):
        print(
            "mixbo-compare: error: --pruner needs one objective (Optuna prunes "
            "single-objective studies only)",
            file=sys.stderr,
        )
        return 2
    args.problems += [u.name for u in users]

    import optuna

    verbosity = optuna.logging.get_verbosity()
    disabled = logging.root.manager.disable
    peer_levels = {name: logging.getLogger(name).level for name in QUIET_PEER_LOGGERS}
    on_term = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is threading.main_thread():  # `kill` stops it like Ctrl-C
        signal.signal(signal.SIGTERM, _interrupt)
    USER_OBJECTIVES.clear()
    USER_OBJECTIVES.update({u.name: u for u in users})
    try:
        with warnings.catch_warnings():  # the filters set by _quiet end with the command
            _quiet(args.verbose)
            return _compare(args, samplers, command)
    finally:
        USER_OBJECTIVES.clear()
        optuna.logging.set_verbosity(verbosity)
        logging.disable(disabled)
        for name, level in peer_levels.items():
            logging.getLogger(name).setLevel(level)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, on_term)


def _fill_defaults(args: argparse.Namespace) -> None:
    """The defaults of the options left out: the suite's with ``--suite``, else the command's."""
    if args.suite:
        args.problems = [*(args.problems or []), *suites.problems(args.suite)]
    elif args.problems is None:
        args.problems = [] if args.objective else list(DEFAULT_PROBLEMS)
    suite = suites.DEFAULTS if args.suite else {}
    if args.samplers is None:
        args.samplers = list(suite.get("samplers", DEFAULT_SAMPLERS))
    if args.seeds is None:
        args.seeds = int(suite.get("seeds", DEFAULT_SEEDS))
    if args.trials is None:
        args.trials = int(suite.get("trials", DEFAULT_TRIALS))
    if args.out is None:
        args.out = f"suite-results/{args.suite}" if args.suite else DEFAULT_OUT


def user_objectives(
    specs: Sequence[str], directions: Sequence[str] | None, problems: Sequence[str] = ()
) -> list[UserObjective]:
    """The objectives ``--objective`` names, each loaded now (so that a missing file or function
    is said before anything runs) under its function's name, with ``directions``."""
    if directions and not specs:
        raise ObjectiveError("--directions goes with --objective (built-in problems know theirs)")
    users: list[UserObjective] = []
    for spec in specs:
        function = load_objective(spec)
        name = default_name(spec)
        if any(c in name for c in "+~@") or name.startswith("mo-"):
            name = name.replace("+", "_").replace("~", "_").replace("@", "_")
            name = "user-" + name if name.startswith("mo-") else name
        taken = {*problems, *(u.name for u in users), *PROBLEMS}
        if name in taken:
            name = next(f"{name}-{k}" for k in range(2, 10**6) if f"{name}-{k}" not in taken)
        users.append(UserObjective(name, list(directions or ["minimize"]), spec, function))
    return users


def _print_list() -> None:
    """``--list``: each problem in one line, then the samplers."""
    width = max(map(len, DESCRIPTIONS))
    print("problems (space; the budget it is meant for; what it models):")
    for name in PROBLEMS:
        print(f"  {name:<{width}}  {DESCRIPTIONS[name]}")
    print(
        "  and by name: bbob-mixint-fF-dD (any function F and dimension D), "
        "mo-bbob-biobj-mixint-fF-dD (bi-objective), NAME@N (instance N of pest, "
        "contamination or a bbob(-biobj)-mixint function), NAME~K (its categories "
        "relabelled by seed K); mo-* problems are multi-objective"
    )
    print(
        "  families by name: maxsat-vV@N (V = 10..100), labs-nN (N = 10..60), "
        "sk-MODEL-DATA (svc, rf, hgb, knn, logreg on iris, wine, breast_cancer, digits), "
        "hpolib-DATA%ENC (ENC: index, cat, int, float); e.g. maxsat-v28@3, labs-n24, "
        "sk-rf-wine, hpolib-slice%float"
    )
    print("  your own: --objective PATH.py:FUNCTION (an Optuna objective; see --help)")
    print("samplers:", " ".join(_label(s) for s in runner.names()))


def _label(sampler: str) -> str:
    """A sampler's name for ``--list``: ours marked, peers marked (and missing ones said)."""
    if runner.is_ours(sampler):
        return f"{sampler} (mixbo)"
    if sampler in runner.UNAVAILABLE:  # the reason's gist: "name: gist (details)"
        gist = runner.UNAVAILABLE[sampler].split(" (")[0].removeprefix(f"{sampler}: ")
        return f"{sampler} (peer, cannot run: {gist})"
    if sampler in runner.PEERS:
        return f"{sampler} (peer{', not installed' if runner.missing(sampler) else ''})"
    return sampler


def _first_failure(outcomes: Sequence[Outcome]) -> str:
    """The first failed run's error, on one line, and how many runs failed or were skipped."""
    failed = [o for o in outcomes if o.run_row["status"] == "failed"]
    skipped = [o for o in outcomes if o.run_row["status"] == "skipped"]
    if not failed:
        return f"all {len(skipped)} runs were skipped"
    first = failed[0]
    lines = str(first.run_row["error"]).strip().splitlines() or ["unknown error"]
    return (
        f"{len(failed)} run(s) failed, {len(skipped)} skipped; {first.task.sampler} on "
        f"{first.task.problem}, seed {first.task.seed}: {lines[0]}"
    )


def _with_objectives(versions: dict[str, str]) -> dict[str, str]:
    """``versions`` that also cover this command's user objectives (their source and
    directions, and the loop that runs them, :mod:`mixbo_compare.user_study`), so that a
    changed objective is run again rather than reused."""
    if not USER_OBJECTIVES:
        return versions
    loop = hashlib.sha256(Path(user_study.__file__).read_bytes()).hexdigest()[:16]
    prints = " ".join([loop, *(u.fingerprint() for _, u in sorted(USER_OBJECTIVES.items()))])
    return {
        s: hashlib.sha256(f"{v} {prints}".encode()).hexdigest()[:16] for s, v in versions.items()
    }


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _compare(args: argparse.Namespace, samplers: list[str], command: str) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    workers = list(dict.fromkeys(args.workers))
    problems = [p if SEPARATOR in p else labelled(p, args.pruner) for p in args.problems]
    tasks, known = plan(problems, samplers, seeds, workers, args.trials)
    if not tasks and all(o.run_row["status"] == "skipped" for o in known):
        reasons = sorted({f"{o.task.sampler}: {o.run_row['error']}" for o in known})
        print(
            "mixbo-compare: nothing to run: every sampler asked for was skipped ("
            + "; ".join(reasons)
            + ")",
            file=sys.stderr,
        )
        return 1
    versions = _with_objectives(run_cache.run_versions(samplers))
    restored = restore_runs(out)
    if restored:
        print(f"restored {restored} finished runs into {out / RUNS_JSONL} from the folder's tables")
    done = resumable(out, versions)
    reused = [t for t in tasks if tuple(getattr(t, k) for k in _TASK_KEY) in done]
    if reused:
        print(
            f"reusing {len(reused)} finished runs of this code ("
            + ", ".join(f"{s} {v}" for s, v in versions.items())
            + f") from {out / RUNS_JSONL}"
        )
        tasks = [t for t in tasks if t not in reused]
        for t in reused:
            r = done[tuple(getattr(t, k) for k in _TASK_KEY)]
            known.append(Outcome(t, r["run"], r["trials"]))
    jobs = min(args.jobs, max(len(tasks), 1))
    start = time.perf_counter()
    csvs = CsvWriter(out)  # runs are saved as they end, so an interrupted comparison keeps them
    for outcome in known:
        csvs(outcome)

    def sink(outcome: Outcome) -> None:
        csvs(outcome)
        if outcome.run_row["status"] == "ok":
            version = run_cache.task_version(versions[outcome.task.sampler], outcome.task.problem)
            record_run(out / RUNS_JSONL, outcome.record(version))

    packages = [runner.PEERS[s].distribution for s in samplers if s in runner.PEERS]
    stamp = provenance.collect(command, jobs, packages)
    stamp["code"] = _with_objectives({"mixbo": run_cache.code_version()})["mixbo"]
    stamp["baseline_codes"] = {s: v for s, v in versions.items() if not runner.is_ours(s)}
    if args.suite:
        stamp["suite"] = args.suite
    earlier = provenance.read(out) or {}
    same_code = all(earlier.get(k) == stamp.get(k) for k in ("code", "baseline_codes"))
    if not tasks and same_code:  # nothing runs: the stamp of the runs' machine, processes, date
        stamp = {**earlier, "command": command}
    elif reused and earlier:
        stamp = provenance.with_reused(stamp, earlier)
    provenance.write(out, stamp)
    try:
        outcomes = known + execute_all(
            tasks, jobs, not args.no_progress, args.verbose, on_outcome=sink
        )
    except KeyboardInterrupt:
        md, _ = report.write_report(out, "Interrupted: the table has the runs that ended.")
        print(f"interrupted: the runs that ended are in {out}; table of those in {md}")
        return 130
    elapsed = time.perf_counter() - start
    write_csvs(out, outcomes)  # the same rows, in task order
    statuses = [o.run_row["status"] for o in outcomes]
    if "ok" not in statuses:  # nothing to tabulate: say why in one line
        failure = _first_failure(outcomes)
        print(f"mixbo-compare: error: no run succeeded; {failure}", file=sys.stderr)
        return 1
    md, pngs = report.write_report(out)
    if args.suite:  # the suite's page: claims per part, every problem's medians and p-values
        (out / SUITE_MD).write_text(report_suite.page(out))
        pngs.append(out / SUITE_MD)
    if not args.quiet:
        print(md.read_text() if not args.suite else (out / SUITE_MD).read_text())
    print(
        f"{len(tasks)} runs in {elapsed:.0f} s ({statuses.count('failed')} failed, "
        f"{statuses.count('skipped')} skipped); wrote {out / report.TRIALS_CSV}, "
        f"{out / report.RUNS_CSV}, {md}, " + ", ".join(str(p) for p in pngs)
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
