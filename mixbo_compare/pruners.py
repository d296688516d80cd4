"""Pruned studies in ``mixbo-compare``: the pruners, and one trial's learning curve run under one.

``--pruner median`` is Optuna's ``MedianPruner(n_startup_trials=5, n_warmup_steps=2)``;
``--pruner hyperband`` its ``HyperbandPruner`` from one step to the problem's ``steps`` with
reduction factor 3 (Li et al., "Hyperband: a novel bandit-based approach to hyperparameter
optimization", JMLR 2018); ``none`` prunes nothing. Only learning-curve problems
(:mod:`mixbo_compare.problems.learning_curves`) report intermediate values, so only they are pruned.

The runs of a pruned study are recorded under the problem's name with ``+PRUNER`` appended
(``lc-powerlaw+median``), so that each (problem, pruner) pair is a column of the report.
"""

from __future__ import annotations

from collections.abc import Iterable

import optuna

from mixbo_compare.problems.problem import Problem

PRUNERS = ("none", "median", "hyperband")
SEPARATOR = "+"


def make_pruner(name: str, problem: Problem) -> optuna.pruners.BasePruner:
    """The pruner ``name`` (one of ``PRUNERS``) for ``problem``'s number of steps."""
    if name == "none":
        return optuna.pruners.NopPruner()
    if name == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=2)
    if name == "hyperband":
        steps = int(getattr(problem, "steps", 1))
        return optuna.pruners.HyperbandPruner(
            min_resource=1, max_resource=max(steps, 1), reduction_factor=3
        )
    raise ValueError(f"unknown pruner {name!r}; choose one of {', '.join(PRUNERS)}.")


def run_curve(trial: optuna.trial.Trial, values: Iterable[float]) -> tuple[float | None, int]:
    """Report each step's value; ``(final value, steps)``, or ``(None, steps)`` when pruned."""
    value, step = float("nan"), 0
    for step, value in enumerate(values, start=1):
        trial.report(float(value), step)
        if trial.should_prune():
            return None, step
    return float(value), step


def labelled(problem: str, pruner: str) -> str:
    """The name a pruned study's runs are recorded under."""
    return problem if pruner == "none" else f"{problem}{SEPARATOR}{pruner}"


def unlabelled(name: str) -> tuple[str, str]:
    """``(problem, pruner)`` of a recorded name."""
    problem, _, pruner = name.partition(SEPARATOR)
    return problem, pruner or "none"
