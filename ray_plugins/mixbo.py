"""``MixboSearch``: the Tune searcher to swap in without knowing the methods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from common.engine import check_startup
from common.methods.mixbo import MixboOptions
from ray_plugins._base import MixedBOSearch
from ray_plugins._space import TuneSpace


class MixboSearch(MixedBOSearch):
    """Mixed-variable BO with the method that did best on the spaces measured
    (:mod:`common.methods.mixbo`): CASMOPOLITAN on every space, the best of our three methods on the
    spaces measured, its GP fitted to warped values, the warping chosen at every refit by the
    evidence for the values (a blend of ranks and magnitudes, or the magnitudes alone where the
    values are smooth), its acquisition maximised by 10 local searches rather than the reference
    code's 3, and, where a categorical of three or more values meets numeric parameters, the
    candidate chosen with CoCaBO's additive model as a second opinion
    (:mod:`common.methods.second_opinion`).

    Example::

        tuner = tune.Tuner(train, param_space=space, tune_config=tune.TuneConfig(
            metric="loss", mode="min", num_samples=100, max_concurrent_trials=4,
            search_alg=MixboSearch(seed=0)))

    Args: those of every mixbo searcher, see :class:`MixedBOSearch`.
    """

    def __init__(
        self,
        space: Mapping[str, Any] | TuneSpace | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        evaluated_rewards: Sequence[float] | None = None,
        *,
        seed: int | None = None,
        n_startup_trials: int = 10,
        max_trials: int | None = None,
        max_concurrent: int = 0,
        slow_suggestion_s: float = 5.0,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
        constraints: Sequence[str] = (),
    ) -> None:
        super().__init__(
            MixboOptions(n_init=check_startup(n_startup_trials)),
            space,
            metric,
            mode,
            points_to_evaluate,
            evaluated_rewards,
            seed=seed,
            n_startup_trials=n_startup_trials,
            max_trials=max_trials,
            max_concurrent=max_concurrent,
            slow_suggestion_s=slow_suggestion_s,
            pending=pending,
            penalizer=penalizer,
            lipschitz=lipschitz,
            constraints=constraints,
        )
