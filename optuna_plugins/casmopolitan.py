"""``CasmopolitanSampler``: CASMOPOLITAN as a drop-in Optuna sampler."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from optuna.samplers import BaseSampler
from optuna.trial import FrozenTrial

from common.casmopolitan import CasmopolitanOptions
from common.engine import check_startup
from optuna_plugins._base import MixedBOSampler


class CasmopolitanSampler(MixedBOSampler):
    """Trust-region BO for many categorical and mixed parameters (Wan et al., ICML 2021).

    A GP with the transformed overlap kernel (mixed with Matérn-5/2 for float and int parameters)
    is searched locally inside a trust region around the incumbent: a Hamming ball on the
    categorical parameters and a box on the others, expanded after successes, shrunk after
    failures, and restarted around a GP-UCB choice when it collapses. The trust region is replayed
    from the study's trials, so processes sharing a storage agree on it. A parameter's first
    trial (and one whose new range excludes the model's value) goes to ``independent_sampler``.

    Example::

        study = optuna.create_study(sampler=CasmopolitanSampler(seed=0))
        study.optimize(objective, n_trials=150)

    Args:
        seed: Seed of the sampler's own random generator (global RNGs are never touched).
        n_startup_trials, independent_sampler, warn_independent_sampling: As for every mixbo
            sampler, see :class:`optuna_plugins._base.MixedBOSampler`.
        acquisition: ``"ei"`` (log expected improvement, the reference's choice) or ``"ucb"``.
        kappa: UCB exploration weight, for ``acquisition="ucb"`` and for restart centres.
        failure_tolerance: Failures in a row before the trust region shrinks; ``None`` chooses it
            from the dimensions, TuRBO's ``max(4, d)`` for each region: ``d`` the number of float
            and int parameters for the box, of categorical ones for the Hamming ball.
        success_tolerance: Successes in a row before it expands.
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
        acquisition: str = "ei",
        kappa: float = 2.0,
        failure_tolerance: int | None = None,
        success_tolerance: int = 3,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
    ) -> None:
        super().__init__(
            CasmopolitanOptions(
                n_init=check_startup(n_startup_trials),
                acquisition=acquisition,
                kappa=kappa,
                failure_tolerance=failure_tolerance,
                success_tolerance=success_tolerance,
            ),
            seed=seed,
            n_startup_trials=n_startup_trials,
            independent_sampler=independent_sampler,
            warn_independent_sampling=warn_independent_sampling,
            pending=pending,
            penalizer=penalizer,
            lipschitz=lipschitz,
            constraints_func=constraints_func,
        )
