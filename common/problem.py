"""A benchmark problem: a mixed space and a function to minimise, framework-free."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from common.space import MixedSpace


@dataclass(frozen=True)
class Problem:
    """A search space, an objective to minimise and, where known, its optimum (or best-known)
    value.

    A noisy objective (e.g. a tabular benchmark returning one training seed's value) also gives
    ``mean``, a configuration's noise-free value, which regret is measured on, and ``seed_noise``,
    which restarts its noise from a seed so that a run replays the same noise whatever ran before
    it. Both are None for a deterministic objective; use them through ``noise_free`` and
    ``reseed``, which work for every problem.
    """

    name: str
    space: MixedSpace
    function: Callable[[Mapping[str, Any]], float]
    optimum: float | None = None
    mean: Callable[[Mapping[str, Any]], float] | None = None
    seed_noise: Callable[[int], None] | None = None

    def __call__(self, config: Mapping[str, Any]) -> float:
        return float(self.function(config))

    def noise_free(self, config: Mapping[str, Any]) -> float:
        """Noise-free value of ``config``: its ``mean``, else the objective's own value."""
        return float(self.mean(config)) if self.mean is not None else self(config)

    def reseed(self, seed: int) -> None:
        """Restart the objective's noise from ``seed`` (nothing to do for a deterministic one)."""
        if self.seed_noise is not None:
            self.seed_noise(seed)

    def regret(self, value: float) -> float:
        if self.optimum is None:
            raise ValueError(f"{self.name} has no known optimum.")
        return value - self.optimum
