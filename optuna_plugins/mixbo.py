"""``MixboSampler``: the sampler to swap in without knowing the methods."""

from __future__ import annotations

from common.method_arguments import method_init
from common.methods.mixbo import MixboOptions
from optuna_plugins._base import MixedBOSampler


class MixboSampler(MixedBOSampler):
    """Mixed-variable BO with the method that did best on the spaces measured
    (:mod:`common.methods.mixbo`).

    It runs CASMOPOLITAN's trust regions on every space: of our three methods, the one with
    the best results on the spaces users run (categorical-rich, mixed, and integers and
    floats only). Its GP is fitted to warped values, the warping chosen at every refit by the
    evidence for the values: a blend that keeps both the ranks and the magnitudes of the values,
    or the magnitudes alone where the values are smooth (:class:`CasmopolitanSampler` keeps the
    paper's ranks), its acquisition is maximised by 10 local searches rather than the reference
    code's 3, and where a categorical of three or more values meets numeric parameters, the
    suggestion is the candidate that CoCaBO's additive model also expects to improve
    (:mod:`common.methods.second_opinion`); the measurements behind the rule are in
    :mod:`common.methods.mixbo`.

    Example::

        study = optuna.create_study(sampler=MixboSampler(seed=0))
        study.optimize(objective, n_trials=100)

    Args:
        seed, n_startup_trials, independent_sampler, warn_independent_sampling, pending,
            penalizer, lipschitz, constraints_func: As for every mixbo sampler, see
            :class:`optuna_plugins._base.MixedBOSampler`.
    """

    __init__ = method_init(MixedBOSampler.__init__, MixboOptions)
