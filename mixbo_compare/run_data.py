"""A results folder read back: ``runs.csv`` (one row per run) and ``trials.csv`` (one row per
trial), the files ``mixbo-compare`` writes, as one :class:`RunData` per run."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

RUNS_CSV = "runs.csv"
TRIALS_CSV = "trials.csv"

RUN_COLUMNS = (
    "problem",
    "sampler",
    "seed",
    "workers",
    "status",
    "error",
    "optimum",
    "n_trials",
    "seconds_per_suggestion",
    "elapsed_seconds",
    "mixbo",
    "normalisation",
    "directions",
)
TRIAL_COLUMNS = (
    "problem",
    "sampler",
    "seed",
    "workers",
    "trial",
    "finished",
    "state",
    "value",
    "true_value",
    "best_true_value",
    "start_time",
    "end_time",
    "suggest_seconds",
    "params",
    "error",
    "steps",
    "objectives",
    "true_objectives",
    "feasible",
)


@dataclass
class RunData:
    """One run as read back from the CSV files; trial arrays are in order of completion."""

    problem: str
    sampler: str
    seed: int
    workers: int
    status: str  # "ok", "failed" or "skipped"
    error: str = ""
    optimum: float | None = None
    n_trials: int = 0
    seconds_per_suggestion: float = math.nan
    elapsed_seconds: float = math.nan
    mixbo: bool = False
    true_values: np.ndarray = field(default_factory=lambda: np.empty(0))
    end_times: np.ndarray = field(default_factory=lambda: np.empty(0))
    steps: np.ndarray = field(default_factory=lambda: np.empty(0))  # learning-curve problems
    # multi-objective problems: the hypervolume's bounds, each trial's noise-free vector (a row
    # of NaN where it failed) and feasibility
    normalisation: dict | None = None
    objectives: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    feasible: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))
    # a user's objective (``--objective``): its directions; its values are stored minimised and
    # it is reported by the best value found, in the user's direction
    directions: list[str] | None = None

    @property
    def n_objectives(self) -> int:
        """How many objectives the run's trials store (0: a single value, as every built-in
        single-objective problem)."""
        if self.normalisation is not None:
            return len(self.normalisation["ideal"])
        return len(self.directions) if self.directions and len(self.directions) > 1 else 0


def _float(text: str) -> float:
    return float(text) if text not in ("", None) else math.nan


def load(folder: str | Path) -> list[RunData]:
    """Read ``runs.csv`` and ``trials.csv`` of a results folder."""
    folder = Path(folder)
    runs: dict[tuple[str, str, int, int], RunData] = {}
    with open(folder / RUNS_CSV, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["problem"], row["sampler"], int(row["seed"]), int(row["workers"]))
            optimum = _float(row["optimum"])
            runs[key] = RunData(
                problem=key[0],
                sampler=key[1],
                seed=key[2],
                workers=key[3],
                status=row["status"],
                error=row["error"],
                optimum=None if math.isnan(optimum) else optimum,
                n_trials=int(row["n_trials"] or 0),
                seconds_per_suggestion=_float(row["seconds_per_suggestion"]),
                elapsed_seconds=_float(row["elapsed_seconds"]),
                mixbo=row["mixbo"] == "True",
                normalisation=json.loads(row["normalisation"])
                if row.get("normalisation")
                else None,
                directions=json.loads(row["directions"]) if row.get("directions") else None,
            )
    trials: dict[tuple[str, str, int, int], list[tuple]] = {}
    with open(folder / TRIALS_CSV, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["problem"], row["sampler"], int(row["seed"]), int(row["workers"]))
            trials.setdefault(key, []).append(
                (
                    int(row["finished"]),
                    _float(row["true_value"]),
                    _float(row["end_time"]),
                    _float(row.get("steps", "")),
                    json.loads(row["true_objectives"]) if row.get("true_objectives") else None,
                    row.get("feasible") == "True",
                )
            )
    for key, rows in trials.items():
        if key in runs:
            rows.sort(key=lambda r: r[0])
            run = runs[key]
            run.true_values = np.array([r[1] for r in rows])
            run.end_times = np.array([r[2] for r in rows])
            run.steps = np.array([r[3] for r in rows])
            if run.n_objectives:
                m = run.n_objectives
                run.objectives = np.array([r[4] if r[4] else [math.nan] * m for r in rows])
                run.feasible = np.array([r[5] for r in rows], dtype=bool)
    return list(runs.values())


@dataclass
class Setting:
    """All runs of one problem with one number of workers: by sampler, the completed runs with
    their curves (a figure after each completed trial), the reason a sampler was skipped, and its
    failed runs."""

    problem: str
    workers: int
    samplers: list[str]
    runs: dict[str, list[RunData]]  # sampler -> ok runs
    curves: dict[str, list[np.ndarray]]  # sampler -> one curve per ok run
    skipped: dict[str, str]  # sampler -> reason
    failed: dict[str, list[RunData]]

    def finals(self) -> dict[str, dict[int, float]]:
        """Each sampler's final figure per seed."""
        return {
            s: {
                r.seed: float(c[-1]) if len(c) else math.nan
                for r, c in zip(self.runs[s], self.curves[s], strict=True)
            }
            for s in self.samplers
            if self.runs[s]
        }


def settings(
    runs: Sequence[RunData], problems: Iterable[str], curve: Callable[[RunData], np.ndarray]
) -> Iterator[tuple[Setting, list[RunData]]]:
    """Each (problem, workers) of ``problems`` as a :class:`Setting` with ``curve`` of each
    completed run, and all its runs."""
    for problem in problems:
        for workers in sorted({r.workers for r in runs if r.problem == problem}):
            mine = [r for r in runs if r.problem == problem and r.workers == workers]
            samplers = list(dict.fromkeys(r.sampler for r in mine))
            ok = {s: [r for r in mine if r.sampler == s and r.status == "ok"] for s in samplers}
            failed = {
                s: [r for r in mine if r.sampler == s and r.status == "failed"] for s in samplers
            }
            setting = Setting(
                problem=problem,
                workers=workers,
                samplers=samplers,
                runs=ok,
                curves={s: [curve(r) for r in ok[s]] for s in samplers},
                skipped={r.sampler: r.error for r in mine if r.status == "skipped"},
                failed=failed,
            )
            yield setting, mine


def what_ran(
    runs: Sequence[RunData], problems: Sequence[str], samplers: Sequence[str], ours: set[str]
) -> str:
    """The line that opens a report's section: its problems, samplers (mixbo's in bold), seeds
    and trials per run."""
    seeds = sorted({r.seed for r in runs})
    trials = sorted({r.n_trials for r in runs if r.n_trials})
    return (
        f"Problems: {', '.join(problems)}. Samplers: "
        + ", ".join(f"**{s}**" if s in ours else s for s in samplers)
        + f". Seeds: {', '.join(map(str, seeds))}. Trials per run: "
        + ", ".join(map(str, trials))
        + "."
    )
