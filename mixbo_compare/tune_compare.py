"""``compare_tune``: searchers compared on a user's own Ray Tune trainable.

The Tune counterpart of :func:`mixbo_compare.compare`: the same ``Tuner`` (trainable,
``param_space``, metric and mode, ``num_samples``, ``max_concurrent_trials``) is fitted once per
searcher and seed, and the runs are reported as ``mixbo-compare`` reports a user's objective (best
value found, verdict, convergence plots). The searchers, by name:

- ours: ``mixbo``, ``cocabo``, ``casmopolitan``, ``bofm`` (:mod:`ray_plugins`);
- Tune's: ``random`` (``BasicVariantGenerator``, Tune's default), ``optuna-tpe`` and
  ``optuna-gp`` (``OptunaSearch`` with Optuna's TPE or GP sampler), and ``hyperopt`` where
  ``hyperopt`` is installed.

Example::

    from mixbo_compare.tune_compare import compare_tune

    def train(config):
        return {"loss": (config["lr"] - 0.01) ** 2 + (config["act"] != "relu")}

    space = {"lr": tune.loguniform(1e-4, 1e-1), "act": tune.choice(["relu", "tanh"])}
    table = compare_tune(train, space, metric="loss", mode="min", num_samples=20, seeds=3)
    print(table.report)

The report names each searcher by its class (``LABELS``). A trial's position in the run is the
order Tune created it; the seconds a suggestion took are
not measured (Tune calls the searcher from its own loop), so the report leaves them out.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import ray_plugins
from mixbo_compare import cli, report
from mixbo_compare.api import ComparisonTable, run_rows
from mixbo_compare.run_result import RunResult

OURS = ("mixbo", "cocabo", "casmopolitan", "bofm")
TUNES = ("random", "optuna-tpe", "optuna-gp", "hyperopt")
# what each name runs, as the report and the table name it
LABELS = {
    "mixbo": "MixboSearch",
    "cocabo": "CoCaBOSearch",
    "casmopolitan": "CasmopolitanSearch",
    "bofm": "BOFMSearch",
    "random": "BasicVariantGenerator",
    "optuna-tpe": "OptunaSearch-TPE",
    "optuna-gp": "OptunaSearch-GP",
    "hyperopt": "HyperOptSearch",
}


def searcher_names() -> list[str]:
    """Every searcher ``compare_tune`` knows by name, ours first."""
    return [*OURS, *TUNES]


def make_searcher(name: str, seed: int, num_samples: int) -> Any:
    """The searcher ``name`` for one run of ``num_samples`` trials, seeded with ``seed``."""
    if name in OURS:
        cls = {
            "mixbo": ray_plugins.MixboSearch,
            "cocabo": ray_plugins.CoCaBOSearch,
            "casmopolitan": ray_plugins.CasmopolitanSearch,
            "bofm": ray_plugins.BOFMSearch,
        }[name]
        return cls(seed=seed, n_startup_trials=min(10, num_samples))
    if name == "random":
        from ray.tune.search.basic_variant import BasicVariantGenerator

        return BasicVariantGenerator(random_state=seed)
    if name in ("optuna-tpe", "optuna-gp"):
        import optuna
        from ray.tune.search.optuna import OptunaSearch

        cls = optuna.samplers.TPESampler if name == "optuna-tpe" else optuna.samplers.GPSampler
        return OptunaSearch(sampler=cls(seed=seed))
    if name == "hyperopt":
        from ray.tune.search.hyperopt import HyperOptSearch

        return HyperOptSearch(random_state_seed=seed)
    raise ValueError(f"unknown searcher {name!r}; choose from {', '.join(searcher_names())}")


def skip_reason(name: str) -> str | None:
    """Why searcher ``name`` cannot run here (its package is missing), or None."""
    if name == "hyperopt" and importlib.util.find_spec("hyperopt") is None:
        return "hyperopt not installed (pip install hyperopt)"
    return None


def compare_tune(
    trainable: Callable[..., Any] | Any,
    param_space: Mapping[str, Any],
    metric: str,
    mode: str = "min",
    searchers: Sequence[str] = ("mixbo", "optuna-tpe", "random"),
    num_samples: int = 20,
    seeds: int | Sequence[int] = 3,
    max_concurrent_trials: int = 1,
    out: str | Path | None = None,
    name: str | None = None,
) -> ComparisonTable:
    """Fit ``trainable`` over ``param_space`` under each of ``searchers`` (names of
    :func:`searcher_names`) for ``num_samples`` trials and each seed (``seeds``: how many, from
    0, or the seeds themselves), optimising the reported ``metric`` in ``mode`` (``"min"`` or
    ``"max"``), with at most ``max_concurrent_trials`` at once; the runs as a table (one row per
    searcher and seed: best value, trials, errors), its ``.report`` the verdict. With ``out``
    the report, CSV files and plots are written there.

    Starts a local Ray instance when none is running (and stops it after); an existing one (a
    cluster after ``ray.init(address=...)``) is used as it is.
    """
    if mode not in ("min", "max"):
        raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
    unknown = [s for s in searchers if s not in searcher_names()]
    if unknown:
        raise ValueError(
            f"unknown searcher(s) {', '.join(unknown)}; choose from {', '.join(searcher_names())}"
        )
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not seed_list or num_samples < 1 or max_concurrent_trials < 1:
        raise ValueError("seeds, num_samples and max_concurrent_trials must be at least 1")
    import ray

    label = name or getattr(trainable, "__name__", "trainable")
    direction = "minimize" if mode == "min" else "maximize"
    tune_logger = logging.getLogger("ray.tune")  # one line per fit otherwise
    level = tune_logger.level
    tune_logger.setLevel(logging.WARNING)
    started = not ray.is_initialized()
    if started:
        ray.init(include_dashboard=False, log_to_driver=False)
    outcomes = []
    index = 0
    try:
        with tempfile.TemporaryDirectory() as storage:
            for seed in seed_list:
                for searcher in searchers:
                    task = cli.Task(
                        index, label, LABELS[searcher], seed, max_concurrent_trials, num_samples
                    )
                    index += 1
                    outcomes.append(
                        _one_run(
                            task, searcher, trainable, param_space, metric, mode, direction, storage
                        )
                    )
    finally:
        tune_logger.setLevel(level)
        if started:
            ray.shutdown()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(out) if out is not None else Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        cli.write_csvs(folder, outcomes)
        if out is not None:
            md, _ = report.write_report(folder)
            text = md.read_text()
        else:
            text = report.table(report.load(folder))
        rows = run_rows(report.load(folder))
    return ComparisonTable(rows, text, Path(out) if out is not None else None)


def _one_run(
    task: cli.Task,
    searcher: str,
    trainable: Any,
    param_space: Mapping[str, Any],
    metric: str,
    mode: str,
    direction: str,
    storage: str,
) -> cli.Outcome:
    """One ``Tuner.fit`` of ``searcher`` as a comparison's outcome (a ``failed`` row if Tune
    raised)."""
    from ray import tune

    reason = skip_reason(searcher)
    if reason is not None:
        return cli.Outcome(task, cli._run_row(task, "skipped", error=reason))
    try:
        tuner = tune.Tuner(
            trainable,
            param_space=dict(param_space),
            tune_config=tune.TuneConfig(
                metric=metric,
                mode=mode,
                num_samples=task.n_trials,
                max_concurrent_trials=task.workers,
                search_alg=make_searcher(searcher, task.seed, task.n_trials),
            ),
            run_config=tune.RunConfig(
                name=f"compare-{searcher}-{task.seed}", storage_path=storage, verbose=0
            ),
        )
        grid = tuner.fit()
        result = _run_result(grid, metric, mode, task.n_trials, task.workers)
    except Exception as exc:
        return cli.Outcome(task, cli._run_row(task, "failed", error=f"{type(exc).__name__}: {exc}"))
    if not np.isfinite(result.values).any():
        errors = [e for e in result.errors if e]
        error = "no trial reported the metric" + (f"; {errors[0]}" if errors else "")
        return cli.Outcome(task, cli._run_row(task, "failed", error=error))
    row = cli._run_row(
        task,
        "ok",
        seconds_per_suggestion="",
        directions=json.dumps([direction]),
        mixbo=searcher in OURS,
    )
    return cli.Outcome(task, row, cli._trial_rows(task, result))


def _run_result(grid: Any, metric: str, mode: str, n: int, workers: int) -> RunResult:
    """The trials of a ``ResultGrid`` in the order Tune created them, values minimised."""
    results = sorted(grid, key=lambda r: _trial_index(r.metrics.get("trial_id", ""), r))
    sign = -1.0 if mode == "max" else 1.0
    values = np.full(n, np.nan)
    ends = np.full(n, np.nan)
    params: list[dict[str, Any]] = [{} for _ in range(n)]
    errors: list[str | None] = [None] * n
    for i, r in enumerate(results[:n]):
        value = (r.metrics or {}).get(metric)
        if r.error is None and isinstance(value, (int, float)) and math.isfinite(value):
            values[i] = sign * float(value)
        elif r.error is not None:
            errors[i] = f"{type(r.error).__name__}: {r.error}".splitlines()[0]
        ends[i] = float((r.metrics or {}).get("timestamp", np.nan))
        params[i] = dict(r.config or {})
    order = np.argsort(np.where(np.isfinite(ends), ends, np.inf), kind="stable")
    start = np.nanmin(ends) if np.isfinite(ends).any() else 0.0
    return RunResult(
        values=values,
        seconds_per_suggestion=math.nan,
        true_values=values.copy(),
        start_times=np.full(n, np.nan),
        end_times=ends - start,
        finish_order=order.astype(int),
        suggest_seconds=np.full(n, np.nan),
        params=params,
        errors=errors,
        workers=workers,
    )


def _trial_index(trial_id: str, result: Any) -> tuple[int, str]:
    """Tune's trial ids end in ``_00012``, the order it created them in."""
    tail = str(trial_id).rpartition("_")[2]
    return (int(tail), str(trial_id)) if tail.isdigit() else (10**9, str(result.path))
