"""``CoCaBOSampler``: CoCaBO as a drop-in Optuna sampler."""

from __future__ import annotations

from optuna.samplers import BaseSampler

from optuna_plugins._base import MixedBOSampler


class CoCaBOSampler(MixedBOSampler):
    """Continuous and categorical BO (Ru et al., ICML 2020) for float, int and categorical params.

    EXP3 bandits choose the categories (one per categorical parameter, sharing the joint reward) and
    a GP with CoCaBO's mixture kernel picks the float and int values by maximising UCB. Parameters
    that do not appear in every trial (conditional or dynamic spaces) go to ``independent_sampler``.

    Example::

        study = optuna.create_study(sampler=CoCaBOSampler(seed=0))
        study.optimize(objective, n_trials=100)

    Args:
        seed: Seed of the sampler's own random generator (global RNGs are never touched).
        n_startup_trials: Trials sampled by ``independent_sampler`` before BO starts (running
            trials count towards them; BO also waits for a first completed trial).
        independent_sampler: Sampler for the start-up trials and for parameters outside the
            relative search space; ``RandomSampler(seed=seed)`` by default.
        warn_independent_sampling: Log a warning when a parameter is sampled independently.
        kappa: UCB exploration weight (the paper uses 2).
        horizon: Budget assumed by EXP3's exploration-rate schedule (the paper's 200).
        pending, penalizer, lipschitz: How running trials count (PLAyBOOK by default); see
            :class:`optuna_plugins._base.MixedBOSampler`.
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
    ) -> None:
        super().__init__(
            seed=seed,
            n_startup_trials=n_startup_trials,
            independent_sampler=independent_sampler,
            warn_independent_sampling=warn_independent_sampling,
            pending=pending,
            penalizer=penalizer,
            lipschitz=lipschitz,
        )
        self._kappa = kappa
        self._horizon = horizon

    def _make_strategy(self):
        from common.cocabo import CoCaBO

        return CoCaBO(
            n_init=self._n_startup_trials, kappa=self._kappa, horizon=self._horizon, **self._pending
        )
