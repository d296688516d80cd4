"""A benchmark problem: a mixed space and a function to minimise, framework-free."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from common.space import MixedSpace


@dataclass(frozen=True)
class Problem:
    """A search space, an objective to minimise and, where known, its optimum (or best-known)
    value."""

    name: str
    space: MixedSpace
    function: Callable[[Mapping[str, Any]], float]
    optimum: float | None = None

    def __call__(self, config: Mapping[str, Any]) -> float:
        return float(self.function(config))

    def regret(self, value: float) -> float:
        if self.optimum is None:
            raise ValueError(f"{self.name} has no known optimum.")
        return value - self.optimum
