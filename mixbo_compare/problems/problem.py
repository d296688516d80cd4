"""A benchmark problem: a mixed space and a function to minimise, framework-free."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from common.space.mixed_space import MixedSpace


@dataclass(frozen=True)
class Problem:
    """A search space, an objective to minimise and, where known, its optimum (or best-known)
    value.

    A noisy objective (e.g. a tabular benchmark returning one training seed's value) also gives
    ``mean``, a configuration's noise-free value, which regret is measured on, and ``seed_noise``,
    which restarts its noise from a seed so that a run replays the same noise whatever ran before
    it. Both are None for a deterministic objective; use them through ``noise_free`` and
    ``reseed``, which work for every problem.

    A *conditional* problem gives ``ask``: it builds a configuration by calling
    ``suggest(name)`` for each parameter its branch uses, in order, as an objective calls
    ``trial.suggest_*`` (``space`` holds every parameter of every branch). A *constrained* problem
    gives ``constraints``: a configuration's constraint values, feasible when each is ≤ 0; its
    ``optimum`` is the best feasible value.
    """

    name: str
    space: MixedSpace
    function: Callable[[Mapping[str, Any]], float]
    optimum: float | None = None
    mean: Callable[[Mapping[str, Any]], float] | None = None
    seed_noise: Callable[[int], None] | None = None
    ask: Callable[[Callable[[str], Any]], dict[str, Any]] | None = None
    constraints: Callable[[Mapping[str, Any]], Sequence[float]] | None = None

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
