"""``CoCaBOSearch``: CoCaBO as a Ray Tune searcher."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from common.engine import check_startup
from common.methods.cocabo.options import CoCaBOOptions
from ray_plugins._base import MixedBOSearch
from ray_plugins._space import TuneSpace


class CoCaBOSearch(MixedBOSearch):
    """Continuous and categorical BO (Ru et al., ICML 2020) as a Tune searcher.

    EXP3 bandits choose the ``tune.choice`` values (one per choice parameter, sharing the joint
    reward) and a GP with CoCaBO's mixture kernel picks the float and integer values by
    maximising UCB; live trials are the busy points the acquisition steers away from.

    Example::

        tuner = tune.Tuner(train, param_space=space, tune_config=tune.TuneConfig(
            metric="loss", mode="min", num_samples=50, max_concurrent_trials=4,
            search_alg=CoCaBOSearch(seed=0)))

    Args (besides those of every mixbo searcher, see :class:`MixedBOSearch`):
        kappa: UCB exploration weight (the paper uses 2).
        horizon: Budget assumed by EXP3's exploration-rate schedule (the paper's 200), as for
            ``CoCaBOSampler``.
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
        kappa: float = 2.0,
        horizon: int = 200,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
        constraints: Sequence[str] = (),
    ) -> None:
        super().__init__(
            CoCaBOOptions(n_init=check_startup(n_startup_trials), kappa=kappa, horizon=horizon),
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
