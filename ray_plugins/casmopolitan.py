"""``CasmopolitanSearch``: CASMOPOLITAN as a Ray Tune searcher."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ray_plugins._base import MixedBOSearch
from ray_plugins._space import TuneSpace
from ray_plugins._strategies import make_strategy


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

    Args: those of :class:`MixedBOSearch`; further keyword arguments go to
    :class:`common.casmopolitan.Casmopolitan` unchanged (e.g. ``pending="kriging_believer"``).
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
        **strategy_options: Any,
    ) -> None:
        self._strategy_options = strategy_options
        super().__init__(
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
        )

    def _make_strategy(self):
        return make_strategy(
            "common.casmopolitan", "Casmopolitan", self._strategy_options, self._n_startup_trials
        )
