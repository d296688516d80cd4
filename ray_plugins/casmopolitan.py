"""``CasmopolitanSearch``: CASMOPOLITAN as a Ray Tune searcher."""

from __future__ import annotations

from common.method_arguments import method_init
from common.methods.casmopolitan.options import CasmopolitanOptions
from ray_plugins._base import MixedBOSearch


class CasmopolitanSearch(MixedBOSearch):
    """CASMOPOLITAN (Wan et al., ICML 2021, "Think global and act local") as a Tune searcher.

    Trust regions, a Hamming ball over the ``tune.choice`` parameters and a box over the numeric
    ones, around the incumbent of a GP with the transformed-overlap mixture kernel, with restarts
    guided by an auxiliary GP; suited to many categorical parameters.

    Example::

        tuner = tune.Tuner(train, param_space=space, tune_config=tune.TuneConfig(
            metric="loss", mode="min", num_samples=100, max_concurrent_trials=4,
            search_alg=CasmopolitanSearch(seed=0)))

    Live trials are busy points: PLAyBOOK penalises the acquisition around them.

    Args (besides those of every mixbo searcher, see :class:`MixedBOSearch`): ``acquisition``,
    ``kappa``, ``failure_tolerance`` and ``success_tolerance`` as for ``CasmopolitanSampler``
    (:class:`common.methods.casmopolitan.options.CasmopolitanOptions`).
    """

    __init__ = method_init(
        MixedBOSearch.__init__,
        CasmopolitanOptions,
        ("acquisition", "kappa", "failure_tolerance", "success_tolerance"),
    )
