"""``BOFMSearch``: BO with frequency-modulated kernels as a Ray Tune searcher."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from common.methods.bofm.options import BOFMOptions
from ray_plugins._base import MixedBOSearch
from ray_plugins._space import TuneSpace


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

    def __init__(
        self,
        space: Mapping[str, Any] | TuneSpace | None = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: Sequence[Mapping[str, Any]] | None = None,
        evaluated_rewards: Sequence[float] | None = None,
        *,
        seed: int | None = None,
        n_startup_trials: int = 10,
        max_trials: int | None = None,
        max_concurrent: int = 0,
        slow_suggestion_s: float = 5.0,
        graphs: Mapping[str, Any] | None = None,
        max_path_values: int | None = None,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
        constraints: Sequence[str] = (),
    ) -> None:
        super().__init__(
            BOFMOptions(graphs=graphs or {}, max_path_values=max_path_values),
            space,
            metric,
            mode,
            points_to_evaluate,
            evaluated_rewards,
            seed=seed,
            n_startup_trials=n_startup_trials,
            max_trials=max_trials,
            max_concurrent=max_concurrent,
            slow_suggestion_s=slow_suggestion_s,
            pending=pending,
            penalizer=penalizer,
            lipschitz=lipschitz,
            constraints=constraints,
        )
