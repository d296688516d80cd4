"""Ax's default generation strategy (the ``ax-platform`` package) as a ``mixbo-compare`` peer.

Ax (Bakshy et al., "AE: A domain-agnostic platform for adaptive experimentation", 2018) on BoTorch
(Balandat et al., NeurIPS 2020): for a mixed space its default strategy evaluates the centre of the
space, then Sobol points, then a GP with a mixed (categorical-aware) kernel whose log-EI is
maximised by BoTorch's alternating continuous/discrete optimiser.

Set-up, and why: ``ax.api.Client`` with the generation strategy it picks itself (Center + Sobol +
``MBM:fast`` in Ax 1.x) — what Ax's documentation recommends for sequential budgets of tens to a
few hundred evaluations, and what a user who picks Ax gets. ``random_seed`` seeds its Sobol
points; BoTorch's model fitting and acquisition optimisation draw from torch's and numpy's global
generators, so each proposal runs under generators seeded from (seed, proposal number) and the
caller's generator states are restored afterwards: a seeded run is reproducible and leaves no
trace in the caller's random streams.

Encoding: floats and integers are ``RangeParameterConfig`` with their log scaling and step (Ax
supports both); categoricals are unordered ``ChoiceParameterConfig`` over the indices of their
choices (any Python object can be a choice). A failed trial is marked failed.

Constraints (a trial's ``trial.set_constraint`` values, feasible when all are ≤ 0) are Ax's
outcome constraints, ``c <= 0`` on one metric per constraint, which its default strategy models
and folds into its acquisition (the probability of feasibility). The names are learnt from the
first trial told with constraints, so the optimisation is configured again then; the trials
before it are the centre and Sobol points, which no model chose.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution, CategoricalDistribution, IntDistribution

from mixbo_compare.peers._sampler import PeerSampler, decode_params, fixed_params, grid

PACKAGE = "ax"
OBJECTIVE = "loss"


def parameter_configs(space: Mapping[str, BaseDistribution]) -> list[Any]:
    """Ax parameter configurations of ``space``, less its single-valued parameters."""
    from ax.api.configs import ChoiceParameterConfig, RangeParameterConfig

    fixed = fixed_params(space)
    out: list[Any] = []
    for name, dist in space.items():
        if name in fixed:
            continue
        if isinstance(dist, CategoricalDistribution):
            values = list(range(len(dist.choices)))
            out.append(ChoiceParameterConfig(name, values, "int", is_ordered=False))
            continue
        values = grid(dist)
        kind = "int" if isinstance(dist, IntDistribution) else "float"
        high = dist.high if values is None else values[-1].item()
        step = None if values is None or dist.step == 1 else dist.step
        scaling = "log" if dist.log else "linear"
        out.append(
            RangeParameterConfig(name, (dist.low, high), kind, step_size=step, scaling=scaling)
        )
    return out


def decode(space: Mapping[str, BaseDistribution], config: Mapping[str, Any]) -> dict[str, Any]:
    """Optuna's values of an Ax parameterisation (indices back to choices, snapped to grids)."""
    return decode_params(
        space, config, lambda _, values, v: values[int(np.argmin(np.abs(values - float(v))))]
    )


@contextlib.contextmanager
def seeded_globals(seed: int) -> Iterator[None]:
    """Run under torch's and numpy's global generators seeded with ``seed``, then restore them."""
    import torch

    state = np.random.get_state()
    try:
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            np.random.seed(seed)
            yield
    finally:
        np.random.set_state(state)


class AxDriver:
    """Asks and tells an ``ax.api.Client`` with its default generation strategy."""

    def __init__(self, space: Mapping[str, BaseDistribution], seed: int | None, n_trials: int):
        from ax.api import Client

        self.space = dict(space)
        self.seeds = np.random.SeedSequence(seed)
        self.client = None
        params = parameter_configs(space)
        if not params:
            return
        self.client = Client(random_seed=int(self.seeds.generate_state(1)[0] >> 1))
        self.client.configure_experiment(parameters=params, name="mixbo-compare")
        self.client.configure_optimization(objective=f"-{OBJECTIVE}")
        self.constraints: tuple[str, ...] = ()  # the outcome constraints' metric names

    def ask(self) -> tuple[Any, dict[str, Any]]:
        if self.client is None:
            return None, fixed_params(self.space)
        seed = int(self.seeds.spawn(1)[0].generate_state(1)[0] >> 1)  # one child per ask
        with seeded_globals(seed):
            ((index, config),) = self.client.get_next_trials(max_trials=1).items()
        return index, decode(self.space, config)

    def tell(self, token: Any, value: float | None, constraints: Mapping[str, float]) -> None:
        if token is None:
            return
        if value is None:
            self.client.mark_trial_failed(token)
            return
        if constraints and not self.constraints:
            self.constraints = tuple(sorted(constraints))
            self.client.configure_optimization(
                objective=f"-{OBJECTIVE}",
                outcome_constraints=[f"{name} <= 0" for name in self.constraints],
            )
        raw_data = {name: float(constraints[name]) for name in self.constraints}
        raw_data[OBJECTIVE] = value
        self.client.complete_trial(token, raw_data=raw_data)


class AxSampler(PeerSampler):
    """Ax's default generation strategy as an Optuna sampler over a fixed search space."""

    make_driver = AxDriver
