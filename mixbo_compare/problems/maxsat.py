"""Weighted MAX-3-SAT on random instances: many binary parameters, a rugged combinatorial landscape.

Instance ``N`` with ``V`` variables (``maxsat-vV@N``): ``round(4.2 V)`` clauses, near the
satisfiability threshold of random 3-SAT (about 4.27 clauses per variable; Mitchell, Selman and
Levesque 1992), each over three distinct variables, each literal negated with probability 1/2, each
clause weighted uniformly in [1, 10]; all drawn from ``np.random.default_rng([N, V])``. The weighted
form is the MaxSAT problem of the BOCS/COMBO benchmarks (Oh et al. 2019), here on generated
instances rather than the MaxSAT-evaluation files.

Objective (minimised): the total weight of the unsatisfied clauses over the total weight, in
[0, 1]. ``optimum`` is exact for ``V <= 20`` (every assignment enumerated once, cached) and
``None`` above.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, MixedSpace
from mixbo_compare.problems.problem import Problem

CLAUSE_RATIO = 4.2
MAX_ENUMERATED = 20  # variables up to which the optimum is enumerated (2^20 assignments)
MIN_VARIABLES, MAX_VARIABLES = 10, 100


class MaxSat:
    """One weighted 3-SAT instance, vectorised over assignments."""

    def __init__(self, n_variables: int, instance: int = 1):
        if not MIN_VARIABLES <= n_variables <= MAX_VARIABLES:
            raise ValueError(
                f"maxsat: the number of variables must lie in {MIN_VARIABLES}..{MAX_VARIABLES}, "
                f"got {n_variables}."
            )
        self.n_variables = n_variables
        self.instance = instance
        rng = np.random.default_rng([instance, n_variables])
        n_clauses = round(CLAUSE_RATIO * n_variables)
        self.variables = np.stack(
            [rng.choice(n_variables, size=3, replace=False) for _ in range(n_clauses)]
        )
        # a literal is true when its variable differs from ``false_when`` (1 for a negated one)
        self.false_when = rng.integers(0, 2, size=(n_clauses, 3)).astype(np.int8)
        weights = rng.uniform(1.0, 10.0, size=n_clauses)
        self.weights = weights / weights.sum()

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Unsatisfied weight fraction of each row of ``x`` (shape ``(n, V)``, values 0 or 1)."""
        x = np.asarray(x, dtype=np.int8).reshape(-1, self.n_variables)
        literals = x[:, self.variables] != self.false_when  # (n, clauses, 3)
        return (~literals.any(axis=2)).astype(float) @ self.weights

    def all_values(self) -> np.ndarray:
        """The objective of every assignment, as an array of shape ``(2,) * V`` indexed by the
        variables' values: each clause adds its weight to the ``2^(V-3)`` assignments that leave
        all three of its literals false (exact enumeration, fast for ``V <= 20``)."""
        if self.n_variables > MAX_ENUMERATED:
            raise ValueError(f"maxsat: enumeration is for at most {MAX_ENUMERATED} variables.")
        values = np.zeros((2,) * self.n_variables)
        for variables, false_when, weight in zip(
            self.variables, self.false_when, self.weights, strict=True
        ):
            index: list[Any] = [slice(None)] * self.n_variables
            for v, f in zip(variables, false_when, strict=True):
                index[v] = int(f)
            values[tuple(index)] += weight
        return values


@functools.cache
def _instance(n_variables: int, instance: int) -> tuple[MaxSat, float | None]:
    model = MaxSat(n_variables, instance)
    optimum = float(model.all_values().min()) if n_variables <= MAX_ENUMERATED else None
    return model, optimum


def maxsat(n_variables: int, instance: int = 1) -> Problem:
    """Weighted MAX-3-SAT instance ``instance`` with ``n_variables`` binary parameters
    ``x0..x{V-1}`` ∈ {0, 1}: minimise the unsatisfied weight fraction."""
    model, optimum = _instance(n_variables, instance)
    names = [f"x{i}" for i in range(n_variables)]
    space = MixedSpace([Categorical(name, (0, 1)) for name in names])

    def function(config: Mapping[str, Any]) -> float:
        return float(model.evaluate(np.array([[int(config[name]) for name in names]]))[0])

    name = f"maxsat-v{n_variables}" + (f"@{instance}" if instance != 1 else "")
    return Problem(name, space, function, optimum)
