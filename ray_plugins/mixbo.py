"""``MixboSearch``: the Tune searcher to swap in without knowing the methods."""

from __future__ import annotations

from common.method_arguments import method_init
from common.methods.mixbo import MixboOptions
from ray_plugins._base import MixedBOSearch


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

    __init__ = method_init(MixedBOSearch.__init__, MixboOptions)
