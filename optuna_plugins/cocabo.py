"""``CoCaBOSampler``: CoCaBO as a drop-in Optuna sampler."""

from __future__ import annotations

from common.method_arguments import method_init
from common.methods.cocabo.options import CoCaBOOptions
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

    Args (besides those of every mixbo sampler, see :class:`optuna_plugins._base.MixedBOSampler`):
        kappa: UCB exploration weight (the paper uses 2).
        horizon: Budget assumed by EXP3's exploration-rate schedule (the paper's 200).
    """

    __init__ = method_init(MixedBOSampler.__init__, CoCaBOOptions, ("kappa", "horizon"))
