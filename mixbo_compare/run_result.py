"""What one benchmark run produced: every trial's values, times, parameters and errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class RunResult:
    """Every trial of one run, indexed by trial number (ask order).

    ``values`` are the observed (possibly noisy) values, NaN where the evaluation failed;
    ``true_values`` the noise-free ones where the problem has a ``mean`` (noisy tabular
    benchmarks), else the observed ones, and +inf for an infeasible trial of a constrained
    problem. ``start_times``/``end_times`` are simulated
    (trials last a half-normal time of mean 1 on ``workers`` workers); ``finish_order`` lists the
    trial numbers in the order they finished (trial order when ``workers == 1``).

    A multi-objective run also fills ``objectives`` (each trial's observed objective vector, a
    row of NaN where the evaluation failed), ``true_objectives`` (the noise-free vectors) and
    ``feasible`` (whether the trial met every constraint); its ``values`` and ``true_values``
    stay NaN.
    """

    values: np.ndarray  # objective value of each trial, in order (minimised)
    seconds_per_suggestion: float
    true_values: np.ndarray = field(default_factory=lambda: np.empty(0))
    start_times: np.ndarray = field(default_factory=lambda: np.empty(0))
    end_times: np.ndarray = field(default_factory=lambda: np.empty(0))
    finish_order: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int))
    suggest_seconds: np.ndarray = field(default_factory=lambda: np.empty(0))
    params: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str | None] = field(default_factory=list)
    workers: int = 1
    steps: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int))  # steps each ran
    pruned: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))
    objectives: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    true_objectives: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    feasible: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))
