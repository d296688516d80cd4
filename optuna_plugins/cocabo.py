"""``CoCaBOSampler``: CoCaBO as a drop-in Optuna sampler."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from optuna.samplers import BaseSampler
from optuna.trial import FrozenTrial

from common.cocabo import CoCaBOOptions
from common.engine import check_startup
from optuna_plugins._base import MixedBOSampler


class CoCaBOSampler(MixedBOSampler):
    """Continuous and categorical BO (Ru et al., ICML 2020) for float, int and categorical params.

    EXP3 bandits choose the categories (one per categorical parameter, sharing the joint reward) and
    a GP with CoCaBO's mixture kernel picks the float and int values by maximising UCB. A
    parameter's first trial (and one whose new range excludes the model's value) goes to
    ``independent_sampler``.

    Example::

        study = optuna.create_study(sampler=CoCaBOSampler(seed=0))
        study.optimize(objective, n_trials=100)

    Args:
        seed: Seed of the sampler's own random generator (global RNGs are never touched).
        n_startup_trials, independent_sampler, warn_independent_sampling: As for every mixbo
            sampler, see :class:`optuna_plugins._base.MixedBOSampler`.
        kappa: UCB exploration weight (the paper uses 2).
        horizon: Budget assumed by EXP3's exploration-rate schedule (the paper's 200).
        pending, penalizer, lipschitz: How running trials count (PLAyBOOK by default); see
            :class:`optuna_plugins._base.MixedBOSampler`.
        constraints_func: Constraint values of a finished trial (feasible when each is ≤ 0), as
            Optuna's samplers take it; see :class:`optuna_plugins._base.MixedBOSampler`.
    """

    def __init__(
        self,
        *,
        seed: int | None = None,
        n_startup_trials: int = 10,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
        kappa: float = 2.0,
        horizon: int = 200,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
    ) -> None:
        super().__init__(
            CoCaBOOptions(n_init=check_startup(n_startup_trials), kappa=kappa, horizon=horizon),
            seed=seed,
            n_startup_trials=n_startup_trials,
            independent_sampler=independent_sampler,
            warn_independent_sampling=warn_independent_sampling,
            pending=pending,
            penalizer=penalizer,
            lipschitz=lipschitz,
            constraints_func=constraints_func,
        )
