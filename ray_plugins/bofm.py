"""``BOFMSearch``: BO with frequency-modulated kernels as a Ray Tune searcher."""

from __future__ import annotations

from common.method_arguments import method_init
from common.methods.bofm.options import BOFMOptions
from ray_plugins._base import MixedBOSearch


class BOFMSearch(MixedBOSearch):
    """BO-FM (Oh et al., "Mixed variable Bayesian optimization with frequency modulated kernels",
    UAI 2021) as a Tune searcher.

    A GP with the frequency-modulated kernel over graphs of the parameters (complete graphs for
    ``tune.choice``, path graphs for integers), its acquisition maximised by alternating discrete
    neighbour moves and continuous gradient steps; suited to ordinal (integer) parameters.

    Example::

        tuner = tune.Tuner(train, param_space=space, tune_config=tune.TuneConfig(
            metric="loss", mode="min", num_samples=100, max_concurrent_trials=4,
            search_alg=BOFMSearch(seed=0)))

    Live trials are busy points: PLAyBOOK penalises the acquisition around them.

    Args (besides those of every mixbo searcher, see :class:`MixedBOSearch`): ``graphs`` and
    ``max_path_values`` as for ``BOFMSampler`` (:class:`common.methods.bofm.options.BOFMOptions`).
    """

    __init__ = method_init(MixedBOSearch.__init__, BOFMOptions, ("graphs", "max_path_values"))
