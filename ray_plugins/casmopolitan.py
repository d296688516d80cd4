"""``CasmopolitanSearch``: CASMOPOLITAN as a Ray Tune searcher."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from common.engine import check_startup
from common.methods.casmopolitan.options import CasmopolitanOptions
from ray_plugins._base import MixedBOSearch
from ray_plugins._space import TuneSpace


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
        acquisition: str = "ei",
        kappa: float = 2.0,
        failure_tolerance: int | None = None,
        success_tolerance: int = 3,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
        constraints: Sequence[str] = (),
    ) -> None:
        super().__init__(
            CasmopolitanOptions(
                n_init=check_startup(n_startup_trials),
                acquisition=acquisition,
                kappa=kappa,
                failure_tolerance=failure_tolerance,
                success_tolerance=success_tolerance,
            ),
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
