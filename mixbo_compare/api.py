"""``compare``: ``mixbo-compare --objective`` from Python, for notebooks and scripts.

Example::

    from mixbo_compare import compare

    def objective(trial):
        x = trial.suggest_float("x", -5, 5)
        kind = trial.suggest_categorical("kind", ["a", "b"])
        return (x - 1) ** 2 + (kind == "b")

    table = compare(objective, samplers=("mixbo", "tpe", "gp"), n_trials=30, seeds=5)
    table.rows        # one dict per sampler and seed: best value, trials, seconds in the sampler
    table.to_pandas() # the same as a DataFrame (pandas needed)
    print(table.report)  # the markdown report with the verdict; written to ``out`` when given
"""

from __future__ import annotations

import math
import pickle
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mixbo_compare import cli, report, report_mo, runner
from mixbo_compare.problems.user_objective import ObjectiveError, UserObjective, load_objective


@dataclass
class ComparisonTable:
    """The runs of a comparison, one row per sampler and seed, and its markdown ``report``
    (the same as ``results.md``: summary, verdict, per-sampler tables)."""

    rows: list[dict[str, Any]]
    report: str
    folder: Path | None = None  # where the report, CSVs and plots were written (``out``)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def to_pandas(self) -> Any:
        """The rows as a ``pandas.DataFrame``."""
        import pandas as pd

        return pd.DataFrame(self.rows)

    def _repr_markdown_(self) -> str:  # a notebook shows the report
        return self.report

    def __str__(self) -> str:
        return self.report


def compare(
    objective: Callable[[Any], Any] | str,
    samplers: Sequence[str] = ("mixbo", "tpe", "gp"),
    n_trials: int = 30,
    seeds: int | Sequence[int] = 3,
    directions: Sequence[str] | None = None,
    pruner: str | None = None,
    out: str | Path | None = None,
    *,
    workers: int = 1,
    jobs: int = 1,
    name: str | None = None,
    progress: bool = False,
) -> ComparisonTable:
    """Run ``objective`` (an Optuna objective, or ``"PATH.py:FUNCTION"``) under each of
    ``samplers`` (``mixbo-compare -s`` names) for ``n_trials`` trials and each seed (``seeds``:
    how many, from 0, or the seeds themselves), and return the runs as a table.

    ``directions`` (default ``["minimize"]``; several make a multi-objective study, reported by
    hypervolume), ``pruner`` (``"median"`` or ``"hyperband"``, for an objective that reports
    intermediate values), ``workers`` (simulated asynchronous workers) and ``jobs`` (processes:
    above 1 the objective must be importable by name, e.g. defined in a module) are as on the
    command line. With ``out`` the report, CSV files and plots are written there.
    """
    user = _user_objective(objective, directions, name)
    names = cli._expand_samplers(samplers)
    unknown = [s for s in names if s not in runner.names()]
    if unknown:
        raise ValueError(
            f"unknown sampler(s) {', '.join(unknown)}; choose from {', '.join(runner.names())}"
        )
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not seed_list or n_trials < 1 or workers < 1 or jobs < 1:
        raise ValueError("seeds, n_trials, workers and jobs must be at least 1")
    pruner = pruner or "none"
    if pruner not in cli.PRUNERS:
        raise ValueError(f"pruner must be one of {', '.join(cli.PRUNERS)}, got {pruner!r}")
    if pruner != "none" and user.n_objectives > 1:
        raise ObjectiveError("a pruner needs one objective: Optuna prunes single-objective studies")
    if jobs > 1:
        _check_picklable(user)
    problem = cli.labelled(user.name, pruner)
    saved = dict(cli.USER_OBJECTIVES)
    cli.USER_OBJECTIVES.clear()
    cli.USER_OBJECTIVES[user.name] = user
    try:
        tasks, known = cli.plan([problem], names, seed_list, [workers], n_trials)
        outcomes = known + cli.execute_all(tasks, jobs, progress)
    finally:
        cli.USER_OBJECTIVES.clear()
        cli.USER_OBJECTIVES.update(saved)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(out) if out is not None else Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        cli.write_csvs(folder, outcomes)
        runs = report.load(folder)
        if out is not None:
            md, _ = report.write_report(folder)
            text = md.read_text()
        else:
            text = report.table(runs)
        rows = run_rows(runs)
    return ComparisonTable(rows, text, Path(out) if out is not None else None)


def _user_objective(
    objective: Callable[[Any], Any] | str, directions: Sequence[str] | None, name: str | None
) -> UserObjective:
    dirs = list(directions or ["minimize"])
    if isinstance(objective, str):
        function = load_objective(objective)
        return UserObjective(name or objective.rpartition(":")[2], dirs, objective, function)
    if not callable(objective):
        raise ObjectiveError(
            f"objective must be a function of an Optuna trial or 'PATH.py:FUNCTION', got "
            f"{type(objective).__name__}"
        )
    label = name or getattr(objective, "__name__", "objective")
    if label == "<lambda>":
        label = "objective"
    return UserObjective(label, dirs, None, objective)


def _check_picklable(user: UserObjective) -> None:
    try:
        pickle.dumps(user)
    except Exception as exc:
        raise ObjectiveError(
            "jobs > 1 runs the objective in other processes, which need it importable by name: "
            "define it in a module (or pass 'PATH.py:FUNCTION'), or use jobs=1"
        ) from exc


def run_rows(runs: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per run: its final figure (best value, or hypervolume for several objectives),
    its trials, those that completed and counted (feasible; a pruned or failed trial does not),
    the seconds spent in the sampler, and the error of a run that did not finish."""
    multi = report_mo.multi_objective_problems(runs)
    figures: dict[tuple[str, str, int, int], float] = {}
    for st in report.group([r for r in runs if r.problem not in multi]):
        for s, rs in st.runs.items():
            for r, c in zip(rs, st.curves[s], strict=True):
                final = st.shown(float(c[-1])) if len(c) else math.nan
                figures[r.problem, s, r.seed, r.workers] = final
    for mst in report_mo.group([r for r in runs if r.problem in multi]):
        for s, rs in mst.runs.items():
            for r, c in zip(rs, mst.curves[s], strict=True):
                figures[r.problem, s, r.seed, r.workers] = float(c[-1]) if len(c) else math.nan
    rows = []
    for r in runs:
        figure = "hypervolume" if r.problem in multi else "best_value"
        completed = int(sum(1 for v in r.true_values if not math.isnan(v)))
        if r.problem in multi and len(r.objectives):
            completed = int(sum(1 for row in r.objectives if all(map(math.isfinite, row))))
        rows.append(
            {
                "problem": r.problem,
                "sampler": r.sampler,
                "seed": r.seed,
                "status": r.status,
                figure: figures.get((r.problem, r.sampler, r.seed, r.workers), math.nan),
                "trials": r.n_trials,
                "completed": completed if r.status == "ok" else 0,
                "sampler_seconds": r.seconds_per_suggestion * r.n_trials
                if r.status == "ok"
                else math.nan,
                "error": r.error.strip().splitlines()[0] if r.error else "",
            }
        )
    return rows
