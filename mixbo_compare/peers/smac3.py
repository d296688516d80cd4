"""SMAC3's hyper-parameter-optimisation facade (the ``smac`` package) as a ``mixbo-compare`` peer.

Lindauer et al., "SMAC3: A Versatile Bayesian Optimization Package for Hyperparameter
Optimization" (JMLR 2022): a random-forest surrogate (log-transformed costs), log-EI maximised by
local and random search, a Sobol initial design, and random configurations interleaved.

Set-up, and why: ``HyperparameterOptimizationFacade`` with its defaults — the facade SMAC's
documentation recommends for HPO with 50–200 evaluations of a mixed space (the random forest
handles categoricals natively; the ``BlackBoxFacade``'s GP is meant for low-dimensional continuous
spaces). The scenario gets the run's budget (``n_trials``: the initial design is
min(10 · dimension, 25 % of it)) and ``deterministic=True``: the runner evaluates each
configuration once, so the intensifier's repeats under new seeds would only spend budget.
Its run history goes to a temporary folder, deleted with the driver.

Encoding: floats and integers are ConfigSpace ``Float``/``Integer`` with their log flag;
ConfigSpace 1.x has no step, so a stepped float or integer becomes an ``Integer`` over the index of
its grid (ordinal, evenly spaced: the same geometry); categoricals are ``Categorical`` over the
indices of their choices (any Python object can be a choice). A failed trial is told as CRASHED
with the worst cost seen so far, 0 before any (the facade's log-scaled encoder turns an infinite
crash cost into NaN, which its random forest rejects).

Constraints (a trial's ``trial.set_constraint`` values, feasible when all are ≤ 0): SMAC3 has no
constraint handling of its own, so an infeasible trial's cost is a penalty in the spirit of Deb's
rule: the highest objective value seen so far (this trial's included) plus its total violation,
above every feasible cost told so far and ordered by violation among the infeasible ones. Without
constraints the costs are the objective's.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution, CategoricalDistribution

from mixbo_compare.peers._sampler import (
    PeerSampler,
    decode_params,
    fixed_params,
    grid,
    violation,
)

PACKAGE = "smac"


def configspace(space: Mapping[str, BaseDistribution], seed: int | None) -> Any:
    """The ConfigSpace of ``space``, less its single-valued parameters."""
    from ConfigSpace import Categorical, ConfigurationSpace, Float, Integer

    fixed = fixed_params(space)
    cs = ConfigurationSpace(seed=seed)
    for name, dist in space.items():
        if name in fixed:
            continue
        if isinstance(dist, CategoricalDistribution):
            cs.add(Categorical(name, list(range(len(dist.choices)))))
            continue
        values = grid(dist)
        if values is None:
            cs.add(Float(name, (dist.low, dist.high), log=dist.log))
        elif dist.step == 1:
            cs.add(Integer(name, (dist.low, dist.high), log=dist.log))
        else:
            cs.add(Integer(name, (0, len(values) - 1)))
    return cs


def decode(space: Mapping[str, BaseDistribution], config: Mapping[str, Any]) -> dict[str, Any]:
    """Optuna's values of a SMAC configuration (indices back to choices and grid values)."""
    # integers of step 1 are SMAC integers; other grids are SMAC integers over grid indices
    return decode_params(
        space, config, lambda dist, values, v: v if dist.step == 1 else values[int(v)]
    )


class SMACDriver:
    """Asks and tells SMAC3's ``HyperparameterOptimizationFacade``."""

    def __init__(self, space: Mapping[str, BaseDistribution], seed: int | None, n_trials: int):
        from smac import HyperparameterOptimizationFacade, Scenario

        self.space = dict(space)
        self.smac = None
        self.worst: float | None = None  # the highest cost told: a failed trial's cost
        self.highest = -math.inf  # the highest objective value seen: an infeasible cost's base
        cs = configspace(space, seed)
        if len(cs) == 0:
            return
        self._folder = tempfile.TemporaryDirectory(prefix="mixbo-smac-")
        scenario = Scenario(
            cs,
            deterministic=True,
            n_trials=n_trials,
            seed=_int_seed(seed),
            output_directory=self._folder.name,
        )
        self.smac = HyperparameterOptimizationFacade(
            scenario, target_function=_never_called, overwrite=True, logging_level=False
        )

    def ask(self) -> tuple[Any, dict[str, Any]]:
        if self.smac is None:
            return None, fixed_params(self.space)
        info = self.smac.ask()
        return info, decode(self.space, dict(info.config))

    def tell(self, token: Any, value: float | None, constraints: Mapping[str, float]) -> None:
        if token is None:
            return
        from smac.runhistory.dataclasses import TrialValue
        from smac.runhistory.enumerations import StatusType

        if value is None:
            cost = 0.0 if self.worst is None else self.worst
            self.smac.tell(token, TrialValue(cost=cost, status=StatusType.CRASHED))
            return
        self.highest = max(self.highest, value)
        excess = violation(constraints)
        cost = self.highest + excess if excess > 0 else value
        self.worst = cost if self.worst is None else max(self.worst, cost)
        self.smac.tell(token, TrialValue(cost=cost))


def _int_seed(seed: int | None) -> int:
    """SMAC needs an integer seed: ``seed`` itself, or fresh entropy when it is None."""
    return seed if seed is not None else int(np.random.SeedSequence().generate_state(1)[0] >> 1)


def _never_called(config: Any, seed: int = 0) -> float:
    raise RuntimeError("SMAC is driven by ask/tell here; it never calls its target function.")


class SMACSampler(PeerSampler):
    """SMAC3's HPO facade as an Optuna sampler over a fixed search space."""

    make_driver = SMACDriver
