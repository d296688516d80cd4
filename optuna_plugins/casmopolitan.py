"""``CasmopolitanSampler``: CASMOPOLITAN as a drop-in Optuna sampler."""

from __future__ import annotations

from common.method_arguments import method_init
from common.methods.casmopolitan.options import CasmopolitanOptions
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

    Args (besides those of every mixbo sampler, see :class:`optuna_plugins._base.MixedBOSampler`):
        acquisition: ``"ei"`` (log expected improvement, the reference's choice) or ``"ucb"``.
        kappa: UCB exploration weight, for ``acquisition="ucb"`` and for restart centres.
        failure_tolerance: Failures in a row before the trust region shrinks; ``None`` chooses it
            from the dimensions, TuRBO's ``max(4, d)`` for each region: ``d`` the number of float
            and int parameters for the box, of categorical ones for the Hamming ball.
        success_tolerance: Successes in a row before it expands.
    """

    __init__ = method_init(
        MixedBOSampler.__init__,
        CasmopolitanOptions,
        ("acquisition", "kappa", "failure_tolerance", "success_tolerance"),
    )
