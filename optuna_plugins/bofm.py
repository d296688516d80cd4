"""``BOFMSampler``: BO-FM as a drop-in Optuna sampler."""

from __future__ import annotations

from common.method_arguments import method_init
from common.methods.bofm.options import BOFMOptions
from optuna_plugins._base import MixedBOSampler


class BOFMSampler(MixedBOSampler):
    """BO with frequency-modulated kernels (Oh et al., UAI 2021) for float, int and categorical.

    A GP with the ModLap kernel treats each categorical as a complete graph and each integer with
    few values as a path graph (ordered), modulated by the distance of the float (and large int)
    values; log-EI is maximised by alternating graph hill climbing and L-BFGS-B. A parameter's
    first trial (and one whose new range excludes the model's value) goes to
    ``independent_sampler``.

    Example::

        study = optuna.create_study(sampler=BOFMSampler(seed=0))
        study.optimize(objective, n_trials=100)

    Args (besides those of every mixbo sampler, see :class:`optuna_plugins._base.MixedBOSampler`):
        graphs: Optional ``{param_name: adjacency}``: a symmetric non-negative matrix over a
            categorical's choices (in their order) or an integer's values, replacing the default
            complete (categorical) or path (integer) graph.
        max_path_values: Integers with at most this many values are path graphs; larger ones are
            modelled as continuous (default 20).
    """

    __init__ = method_init(MixedBOSampler.__init__, BOFMOptions, ("graphs", "max_path_values"))
