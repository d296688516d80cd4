"""``CoCaBOSearch``: CoCaBO as a Ray Tune searcher."""

from __future__ import annotations

from common.method_arguments import method_init
from common.methods.cocabo.options import CoCaBOOptions
from ray_plugins._base import MixedBOSearch


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

    __init__ = method_init(MixedBOSearch.__init__, CoCaBOOptions, ("kappa", "horizon"))
