"""Observations in the order they were asked, and the configurations still being evaluated."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class History:
    """Completed ``(config, value)`` pairs in trial order (values to *minimise*), pending configs,
    and each completed trial's constraint values (:mod:`common.acquisition.feasibility`), if any;
    pruned trials are observations too, with imputed values, marked by ``pruned``.

    A multi-objective study's history also holds ``objectives``, each trial's values per
    objective (n, m), all to minimise; ``values`` is then a scalarisation of them (the one a
    suggestion models is drawn per suggestion: :mod:`common.acquisition.scalarization`). A
    single-objective history has ``objectives`` ``None``.

    The adapters build one from a framework's trial list: they flip maximised objectives, drop
    failed trials and non-finite values, and pass running trials as ``pending``. Every strategy
    state (bandit weights, trust regions) is a pure function of this ordered history.
    """

    configs: tuple[Mapping[str, Any], ...] = ()
    values: np.ndarray = field(default_factory=lambda: np.empty(0))
    pending: tuple[Mapping[str, Any], ...] = ()
    constraints: np.ndarray | None = None  # (n, k): ≤ 0 feasible, NaN not reported
    pruned: np.ndarray | None = None  # (n,): which values are imputed (:mod:`common.space.pruned`)
    objectives: np.ndarray | None = None  # (n, m), m ≥ 2: per-objective values to minimise

    def __post_init__(self) -> None:
        object.__setattr__(self, "configs", tuple(self.configs))
        object.__setattr__(self, "pending", tuple(self.pending))
        values = np.asarray(self.values, dtype=float).reshape(-1)
        if len(values) != len(self.configs):
            raise ValueError(f"{len(self.configs)} configs but {len(values)} values.")
        if not np.all(np.isfinite(values)):
            raise ValueError("History values must be finite; drop or clip them in the adapter.")
        object.__setattr__(self, "values", values)
        c = self.constraints
        c = np.empty((len(values), 0)) if c is None else np.asarray(c, dtype=float)
        if c.ndim != 2 or len(c) != len(values):
            raise ValueError(f"constraints must be an (n, k) array for {len(values)} values.")
        object.__setattr__(self, "constraints", c)
        p = np.zeros(len(values), bool) if self.pruned is None else np.asarray(self.pruned, bool)
        if p.shape != values.shape:
            raise ValueError(f"pruned must be a mask of {len(values)} trials.")
        object.__setattr__(self, "pruned", p)
        if self.objectives is not None:
            y = np.asarray(self.objectives, dtype=float)
            if y.ndim != 2 or len(y) != len(values) or y.shape[1] < 2:
                raise ValueError(f"objectives must be (n, m ≥ 2) for {len(values)} values.")
            if not np.all(np.isfinite(y)):
                raise ValueError("History objectives must be finite; drop or clip them first.")
            object.__setattr__(self, "objectives", y)

    @property
    def n_objectives(self) -> int:
        """How many objectives the study has (1 without ``objectives``)."""
        return 1 if self.objectives is None else int(self.objectives.shape[1])

    @property
    def n_pruned(self) -> int:
        """How many observations are pruned trials with imputed values."""
        return int(self.pruned.sum())

    @property
    def constrained(self) -> bool:
        """Whether any trial reports a constraint value."""
        return bool(np.isfinite(self.constraints).any())

    @property
    def feasible(self) -> np.ndarray:
        """Which trials satisfy every constraint (a trial missing a value does not)."""
        c = self.constraints
        return np.all(np.where(np.isnan(c), np.inf, c) <= 0, axis=1)

    def __len__(self) -> int:
        return len(self.configs)

    def subset(self, rows: np.ndarray) -> History:
        """The observations at ``rows`` (indices, in the order given), with the same pending."""
        rows = np.asarray(rows, dtype=int)
        objectives = None if self.objectives is None else self.objectives[rows]
        return History(
            tuple(self.configs[i] for i in rows),
            self.values[rows],
            self.pending,
            self.constraints[rows],
            self.pruned[rows],
            objectives,
        )

    @classmethod
    def from_lists(
        cls,
        configs: Sequence[Mapping[str, Any]],
        values: Sequence[float],
        pending: Sequence[Mapping[str, Any]] = (),
        constraints: Sequence[Sequence[float]] | None = None,
    ) -> History:
        c = None if constraints is None else np.asarray(constraints, dtype=float)
        return cls(tuple(configs), np.asarray(values, dtype=float), tuple(pending), c)
