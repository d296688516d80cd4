"""One study of a multi-objective problem: ``optuna.create_study(directions=[...])``, every
trial's objective vector and feasibility recorded.

The counterpart of :func:`mixbo_compare.runner.run` for a
:class:`~mixbo_compare.problems.problem.MultiObjectiveProblem`, with the same simulated workers,
failure handling and seeding; the hypervolume is computed from what it records, in the report.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution

from mixbo_compare.problems.problem import MultiObjectiveProblem
from mixbo_compare.run_result import RunResult
from mixbo_compare.study_loop import StudyLoop


def set_constraints(trial: optuna.Trial, values: Any) -> list[float]:
    """A configuration's constraint ``values`` set on ``trial`` (``c0``, ``c1``, …) as Optuna's
    constrained samplers read them; returned as floats."""
    constraints = [float(c) for c in values]
    for k, c in enumerate(constraints):
        trial.set_constraint(f"c{k}", c)
    return constraints


def run_study(
    problem: MultiObjectiveProblem,
    sampler: optuna.samplers.BaseSampler,
    dists: dict[str, BaseDistribution],
    seed: int,
    n_trials: int,
    *,
    workers: int = 1,
    on_trial: Callable[[int], None] | None = None,
) -> RunResult:
    """Run ``n_trials`` trials of ``problem`` with ``sampler`` on ``workers`` simulated workers.

    An objective that raises or returns a non-finite value gives a FAILed trial (a row of NaN);
    an exception from the sampler propagates (the command records the run as failed). A
    constrained problem's values are set with ``trial.set_constraint`` before the tell, as
    Optuna's samplers read them.
    """
    problem.reseed(seed)
    study = optuna.create_study(
        sampler=sampler, directions=problem.directions, study_name=f"mixbo-compare-seed-{seed}"
    )
    m = problem.n_objectives
    observed = np.full((n_trials, m), np.nan)
    true = np.full((n_trials, m), np.nan)
    feasible = np.zeros(n_trials, dtype=bool)
    loop = StudyLoop(study, n_trials, workers, seed, on_trial)

    def evaluate(i: int, trial: optuna.trial.Trial) -> dict[str, Any]:
        config = loop.params[i]
        values = problem(config)
        if len(values) != m or not all(math.isfinite(v) for v in values):
            raise ValueError(f"objective returned {values}")
        noise_free = problem.noise_free(config) if problem.mean is not None else values
        ok = True
        if problem.constraints is not None:
            ok = all(c <= 0 for c in set_constraints(trial, problem.constraints(config)))
        observed[i], true[i], feasible[i] = values, noise_free, ok
        return {"values": values}

    loop.run(lambda: study.ask(dists), evaluate)
    return loop.result(
        values=np.full(n_trials, np.nan),
        true_values=np.full(n_trials, np.nan),
        objectives=observed,
        true_objectives=true,
        feasible=feasible,
    )
