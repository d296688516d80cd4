"""Running mixbo's samplers, Optuna's built-in ones and the peers on the benchmark problems.

The engine behind ``mixbo-compare``: a sampler registry (name -> factory; the peers, built for the
run's search space and budget, are in ``peers.PEERS``) and one function that runs
one (problem, sampler, seed) study and returns the value of every trial in order, either
sequentially or on ``k`` simulated asynchronous workers (``simulated_workers``: half-normal
runtimes of mean 1, RUNNING trials pending, no real waiting). The command line, the table and the
plots live in ``cli`` and ``report``.

Example::

    result = run(get_problem("func2c"), "tpe", seed=0, n_trials=40, workers=4)
    result.values, result.end_times, result.seconds_per_suggestion
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from common.space.mixed_space import Categorical, Float, MixedSpace
from common.space.pruned import IMPUTATIONS, check_imputation
from mixbo_compare.multi_objective import run_study, set_constraints
from mixbo_compare.peers import PEERS, UNAVAILABLE, missing
from mixbo_compare.problems.problem import MultiObjectiveProblem, Problem
from mixbo_compare.pruners import make_pruner, run_curve
from mixbo_compare.run_result import RunResult
from mixbo_compare.study_loop import StudyLoop
from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler
from optuna_plugins._base import MixedBOSampler

SamplerFactory = Callable[[int], optuna.samplers.BaseSampler]

# mixbo's own samplers, by registry name; everything else in SAMPLERS is an Optuna baseline.
MIXBO_SAMPLERS: dict[str, type[MixedBOSampler]] = {
    "mixbo": MixboSampler,
    "cocabo": CoCaBOSampler,
    "casmopolitan": CasmopolitanSampler,
    "bofm": BOFMSampler,
}


def _ours(cls: type[MixedBOSampler]) -> SamplerFactory:
    return lambda seed: cls(seed=seed)


# Baselines get their best default set-up: TPE and GPSampler with Optuna 5's defaults.
SAMPLERS: dict[str, SamplerFactory] = {
    **{name: _ours(cls) for name, cls in MIXBO_SAMPLERS.items()},
    "random": lambda seed: optuna.samplers.RandomSampler(seed=seed),
    "tpe": lambda seed: optuna.samplers.TPESampler(seed=seed),
    "tpe-cl": lambda seed: optuna.samplers.TPESampler(seed=seed, constant_liar=True),  # async
    # TPE that models conditional spaces (Optuna's advice for them)
    "tpe-group": lambda seed: optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True),
    "gp": lambda seed: optuna.samplers.GPSampler(seed=seed),
    "cmaes": lambda seed: optuna.samplers.CmaEsSampler(seed=seed),  # int + float spaces only
    # the usual multi-objective baseline (genetic; also runs single-objective studies)
    "nsga2": lambda seed: optuna.samplers.NSGAIISampler(seed=seed),
}


def _pruned_as(method: str) -> SamplerFactory:
    def make(seed: int) -> MixedBOSampler:
        sampler = MixboSampler(seed=seed)
        sampler._engine.pruned = check_imputation(method)
        return sampler

    return make


# MixboSampler with each way of modelling pruned trials (common.space.pruned), for the ablation
PRUNED_ABLATION: dict[str, SamplerFactory] = {
    f"mixbo-pruned-{method}": _pruned_as(method) for method in IMPUTATIONS
}
SAMPLERS.update(PRUNED_ABLATION)


def is_ours(sampler: str) -> bool:
    """Whether the registered sampler ``sampler`` is one of mixbo's (not an Optuna baseline)."""
    return sampler in MIXBO_SAMPLERS or sampler in PRUNED_ABLATION


def names() -> list[str]:
    """Every sampler known by name: ours, Optuna's, the peers (and those that cannot run here)."""
    return [*SAMPLERS, *PEERS, *UNAVAILABLE]


def _no_categoricals(space: MixedSpace) -> str | None:
    if any(isinstance(p, Categorical) and len(p.choices) > 1 for p in space.params):
        return "no categorical support (CMA-ES)"
    return None


def _peer_installed(name: str) -> Callable[[MixedSpace], str | None]:
    return lambda space: missing(name)


# sampler -> check returning why it does not apply to a space (None when it does)
APPLIES: dict[str, Callable[[MixedSpace], str | None]] = {
    "cmaes": _no_categoricals,
    **{name: _peer_installed(name) for name in PEERS},
    **{name: (lambda space, why=why: why) for name, why in UNAVAILABLE.items()},
}


def skip_reason(sampler: str, space: MixedSpace) -> str | None:
    """Why ``sampler`` is not run on ``space`` (e.g. CMA-ES on categoricals), or None."""
    check = APPLIES.get(sampler)
    return check(space) if check is not None else None


def distributions(space: MixedSpace) -> dict[str, BaseDistribution]:
    """Optuna distributions of a mixbo space (the inverse of the sampler's conversion)."""
    out: dict[str, BaseDistribution] = {}
    for p in space.params:
        if isinstance(p, Categorical):
            out[p.name] = CategoricalDistribution(p.choices)
        elif isinstance(p, Float):
            out[p.name] = FloatDistribution(p.low, p.high, log=p.log, step=p.step)
        else:
            out[p.name] = IntDistribution(p.low, p.high, log=p.log, step=p.step)
    return out


def suggest_param(trial: optuna.trial.Trial, name: str, dist: BaseDistribution) -> Any:
    """``trial.suggest_*`` for ``name`` with the distribution ``dist``."""
    if isinstance(dist, CategoricalDistribution):
        return trial.suggest_categorical(name, dist.choices)
    if isinstance(dist, IntDistribution):
        return trial.suggest_int(name, dist.low, dist.high, step=dist.step, log=dist.log)
    return trial.suggest_float(name, dist.low, dist.high, step=dist.step, log=dist.log)


__all__ = ["RunResult", "SAMPLERS", "run"]


def run(
    problem: Problem | MultiObjectiveProblem,
    sampler: str | SamplerFactory,
    seed: int,
    n_trials: int,
    *,
    workers: int = 1,
    on_trial: Callable[[int], None] | None = None,
    pruner: str = "none",
) -> RunResult:
    """One study of ``problem`` with ``sampler`` on ``workers`` simulated workers (1: sequential).

    With ``workers = k > 1`` the study keeps ``k`` trials RUNNING (asked, not yet told) while the
    budget lasts; each finishes after a half-normal runtime of mean 1 drawn from a stream that
    depends only on ``seed``, and is told in order of simulated finish time. An objective that
    raises or returns NaN gives a FAILed trial (value NaN) and the run goes on; an exception from
    the sampler propagates. The problem is reseeded with ``seed`` first (``Problem.reseed``), so a
    run replays the same noise whatever ran before it. ``on_trial(n_done)`` is called after each
    tell (for progress bars).

    A learning-curve problem (:mod:`mixbo_compare.problems.learning_curves`) reports each
    step's value and stops when ``pruner`` (:data:`mixbo_compare.pruners.PRUNERS`) prunes the trial:
    a PRUNED trial has no value (NaN); ``steps`` records the steps each trial consumed.

    A multi-objective problem runs a study with its ``directions``
    (:func:`mixbo_compare.multi_objective.run_study`; no pruner): the result's ``objectives``,
    ``true_objectives`` and ``feasible`` hold each trial's vectors.
    """
    from optuna.trial import TrialState

    dists = distributions(problem.space)
    if isinstance(sampler, str) and sampler in UNAVAILABLE:
        raise ValueError(UNAVAILABLE[sampler])
    if isinstance(sampler, str) and sampler in PEERS:
        chosen = PEERS[sampler].build(seed, dists, n_trials)
    else:
        chosen = (SAMPLERS[sampler] if isinstance(sampler, str) else sampler)(seed)
    if isinstance(problem, MultiObjectiveProblem):
        if pruner != "none":
            raise ValueError("multi-objective problems are run without a pruner.")
        return run_study(problem, chosen, dists, seed, n_trials, workers=workers, on_trial=on_trial)
    problem.reseed(seed)
    curve = getattr(problem, "curve", None)
    study = optuna.create_study(  # HyperbandPruner picks brackets by hashing the study's name
        sampler=chosen,
        direction="minimize",
        pruner=make_pruner(pruner, problem),
        study_name=f"mixbo-compare-seed-{seed}",
    )
    steps = np.zeros(n_trials, dtype=int)
    pruned = np.zeros(n_trials, dtype=bool)

    values = np.full(n_trials, np.nan)
    true_values = np.full(n_trials, np.nan)
    loop = StudyLoop(study, n_trials, workers, seed, on_trial)

    def ask() -> optuna.trial.Trial:
        if problem.ask is None:
            return study.ask(dists)
        trial = study.ask()  # a conditional problem asks for its branch's parameters
        problem.ask(lambda name: suggest_param(trial, name, dists[name]))
        return trial

    def evaluate(i: int, trial: optuna.trial.Trial) -> dict[str, Any]:
        config = loop.params[i]
        if curve is not None:
            value, steps[i] = run_curve(trial, curve(config))
            if value is None:
                pruned[i] = True
                return {"state": TrialState.PRUNED}
        else:
            value = problem(config)
        if not math.isfinite(value):
            raise ValueError(f"objective returned {value}")
        # a deterministic objective's value is its noise-free one: not evaluated twice
        true = problem.noise_free(config) if problem.mean is not None else value
        if problem.constraints is not None:
            constraints = set_constraints(trial, problem.constraints(config))
            if any(c > 0 for c in constraints):
                true = math.inf  # an infeasible trial never counts as the best
        values[i], true_values[i] = value, true
        return {"values": value}

    loop.run(ask, evaluate)
    return loop.result(values=values, true_values=true_values, steps=steps, pruned=pruned)
