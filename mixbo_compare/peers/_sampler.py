"""One thin Optuna sampler around any ask/tell optimiser: the peers' common door into a study.

A peer is a :class:`Driver`: ``ask() -> (token, params)`` proposes one configuration in Optuna's
values, ``tell(token, value, constraints)`` reports its minimised value (``None`` for a failed
trial) and the trial's constraint values (``trial.set_constraint``'s, feasible when all are ≤ 0;
empty without constraints), which each peer handles in its own way. A
:class:`PeerSampler` is built for one fixed search space (the distributions a define-and-run
``study.ask(distributions)`` passes, as ``mixbo-compare`` does), so the peer proposes every
trial from the first one; it asks the driver in ``sample_relative`` and tells it in
``after_trial``. Parameters outside that space fall back to random sampling. The driver lives in
this process's memory: one study, one process (the peers keep their own state, unlike mixbo's
samplers, whose state is replayed from the study).

The encoding helpers (:func:`grid`, :func:`fixed_params`) are shared by the peers' space
translations: a stepped float or integer is a grid of values, a parameter with one possible value is
not shown to the peer at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState


class Driver(Protocol):
    """A peer optimiser behind its own ask/tell interface, in Optuna's parameter values."""

    def ask(self) -> tuple[Any, dict[str, Any]]: ...

    def tell(self, token: Any, value: float | None, constraints: Mapping[str, float]) -> None: ...


DriverFactory = Callable[[Mapping[str, BaseDistribution], int | None, int], Driver]


class PeerSampler(optuna.samplers.BaseSampler):
    """An Optuna sampler whose every proposal comes from a peer's ``Driver``.

    ``search_space`` fixes the parameters the peer optimises; ``n_trials`` is the budget the peer
    may plan for (SMAC sizes its initial design by it); ``seed`` seeds the peer.
    """

    make_driver: DriverFactory  # each peer's sampler names its driver

    def __init__(
        self,
        search_space: Mapping[str, BaseDistribution],
        *,
        seed: int | None = None,
        n_trials: int = 100,
    ) -> None:
        if n_trials < 1:
            raise ValueError(f"n_trials must be at least 1, got {n_trials}.")
        self._space = dict(search_space)
        self._seed = seed
        self._n_trials = n_trials
        self._driver: Driver | None = None
        self._tokens: dict[int, Any] = {}  # trial number -> the driver's token, until told
        self._fallback = optuna.samplers.RandomSampler(seed=seed)

    @property
    def driver(self) -> Driver:
        """The peer, built at the first proposal."""
        if self._driver is None:
            self._driver = self.make_driver(self._space, self._seed, self._n_trials)
        return self._driver

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        return dict(self._space)

    def sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        if not search_space:
            return {}
        if study._is_multi_objective():
            raise ValueError(f"{type(self).__name__} optimises a single objective.")
        token, params = self.driver.ask()
        self._tokens[trial.number] = token
        return params

    def sample_independent(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        return self._fallback.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        token = self._tokens.pop(trial.number, None)
        if token is None:
            return
        value = None
        if state == TrialState.COMPLETE and values and math.isfinite(values[0]):
            sign = -1.0 if study.direction == StudyDirection.MAXIMIZE else 1.0
            value = sign * float(values[0])
        self.driver.tell(token, value, trial.constraints)

    def reseed_rng(self) -> None:
        self._fallback.reseed_rng()


def violation(constraints: Mapping[str, float]) -> float:
    """The total amount by which the constraint values exceed 0 (0 when feasible or none)."""
    return float(sum(max(c, 0.0) for c in constraints.values()))


# ------------------------------------------------------------------------------ space helpers
def grid(dist: BaseDistribution) -> np.ndarray | None:
    """The values of a stepped float or of an integer (None for a continuous float)."""
    if isinstance(dist, IntDistribution):
        return np.arange(dist.low, dist.high + 1, dist.step, dtype=np.int64)
    if isinstance(dist, FloatDistribution) and dist.step is not None:
        n = int(math.floor((dist.high - dist.low) / dist.step + 1e-9))
        return dist.low + dist.step * np.arange(n + 1)
    return None


def n_values(dist: BaseDistribution) -> float:
    """How many values ``dist`` allows (inf for a continuous float)."""
    if isinstance(dist, CategoricalDistribution):
        return len(dist.choices)
    values = grid(dist)
    if values is not None:
        return len(values)
    return 1 if dist.low == dist.high else math.inf


def fixed_params(space: Mapping[str, BaseDistribution]) -> dict[str, Any]:
    """The parameters with a single possible value, and that value (not shown to a peer)."""
    out: dict[str, Any] = {}
    for name, dist in space.items():
        if n_values(dist) == 1:
            out[name] = dist.choices[0] if isinstance(dist, CategoricalDistribution) else dist.low
    return out


def decode_params(
    space: Mapping[str, BaseDistribution],
    config: Mapping[str, Any],
    on_grid: Callable[[BaseDistribution, np.ndarray, Any], Any],
) -> dict[str, Any]:
    """Optuna's values of a peer's configuration: category indices back to choices, a gridded
    parameter's value recovered by ``on_grid(dist, grid_values, value)``, the fixed ones added."""
    params = fixed_params(space)
    for name, value in config.items():
        dist = space[name]
        if isinstance(dist, CategoricalDistribution):
            params[name] = dist.choices[int(value)]
            continue
        values = grid(dist)
        if values is not None:
            value = on_grid(dist, values, value)
        params[name] = plain(dist, value)
    return params


def plain(dist: BaseDistribution, value: Any) -> Any:
    """A numeric value as the Python type Optuna expects (int for integers, float for floats)."""
    if isinstance(dist, IntDistribution):
        return int(round(float(value)))
    if isinstance(dist, FloatDistribution):
        return float(min(max(float(value), dist.low), dist.high))
    return value
