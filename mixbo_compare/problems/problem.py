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


@dataclass(frozen=True)
class MultiObjectiveProblem:
    """A search space and several objectives, all minimised, with fixed normalisation bounds.

    ``function`` returns a configuration's objective vector. ``ideal`` and ``nadir`` are the
    best and the worst value of each objective over the true (or best-known) Pareto front; the
    comparison scales each objective to ``(f - ideal) / (nadir - ideal)`` and measures the
    hypervolume of the feasible non-dominated points up to the reference point
    ``reference`` (the same in every normalised coordinate). Fixed bounds make a run's
    hypervolume independent of the other runs. ``optimal_hypervolume`` is the true front's
    normalised hypervolume where it is known (None otherwise).

    As for :class:`Problem`: ``mean`` gives a noisy objective's noise-free vector, which the
    hypervolume is measured on, ``seed_noise`` restarts its noise, and ``constraints`` gives
    constraint values, feasible when each is ≤ 0. A separate class, not a field of
    :class:`Problem`, so that single-objective problems and their code paths stay as they are.
    """

    name: str
    space: MixedSpace
    function: Callable[[Mapping[str, Any]], Sequence[float]]
    ideal: tuple[float, ...]
    nadir: tuple[float, ...]
    reference: float = 1.1
    optimal_hypervolume: float | None = None
    mean: Callable[[Mapping[str, Any]], Sequence[float]] | None = None
    seed_noise: Callable[[int], None] | None = None
    constraints: Callable[[Mapping[str, Any]], Sequence[float]] | None = None
    ask = None  # no conditional multi-objective problems

    def __post_init__(self) -> None:
        if len(self.ideal) != len(self.nadir) or len(self.ideal) < 2:
            raise ValueError(f"{self.name}: ideal and nadir need one entry per objective (≥ 2).")
        if any(lo >= hi for lo, hi in zip(self.ideal, self.nadir, strict=True)):
            raise ValueError(f"{self.name}: each ideal value must lie below its nadir value.")

    @property
    def n_objectives(self) -> int:
        return len(self.ideal)

    @property
    def directions(self) -> list[str]:
        """Optuna's ``directions`` of the study: every objective is minimised."""
        return ["minimize"] * self.n_objectives

    def __call__(self, config: Mapping[str, Any]) -> list[float]:
        return [float(v) for v in self.function(config)]

    def noise_free(self, config: Mapping[str, Any]) -> list[float]:
        """Noise-free objective vector of ``config``: its ``mean``, else the observed one."""
        return [float(v) for v in self.mean(config)] if self.mean is not None else self(config)

    def reseed(self, seed: int) -> None:
        """Restart the objectives' noise from ``seed`` (nothing to do for a deterministic one)."""
        if self.seed_noise is not None:
            self.seed_noise(seed)

    def normalisation(self) -> dict[str, Any]:
        """The bounds the hypervolume is measured with, as stored beside each run."""
        return {
            "ideal": list(self.ideal),
            "nadir": list(self.nadir),
            "reference": self.reference,
            "optimal_hypervolume": self.optimal_hypervolume,
        }
