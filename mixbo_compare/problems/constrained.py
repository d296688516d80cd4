"""Constrained benchmark problems: feasible when every constraint value is ≤ 0.

``pressure-vessel``: the pressure-vessel design problem (Sandgren, 1990; in the form of Coello,
2000), minimising the cost of a cylindrical vessel: shell and head thicknesses ``Ts``, ``Th`` are
integer multiples of 0.0625 inch (``ts``, ``th`` in 1…99), inner radius ``R`` and length ``L`` in
[10, 200] inch::

    cost = 0.6224·Ts·R·L + 1.7781·Th·R² + 3.1661·Ts²·L + 19.84·Ts²·R
    g1 = −Ts + 0.0193·R ≤ 0            g2 = −Th + 0.00954·R ≤ 0
    g3 = −π·R²·L − 4/3·π·R³ + 1 296 000 ≤ 0    g4 = L − 240 ≤ 0

The constraints are scaled (g1/Ts-range, g3 by 1 296 000) so that each is of order one. Best known
feasible cost 6059.714 (Ts = 0.8125, Th = 0.4375, R = 42.0984, L = 176.6366). Deterministic.

``forest-size``: the best cross-validated error of a random forest on scikit-learn's bundled
breast-cancer data within a model-size budget: ``n_estimators`` 1…100, ``max_depth`` 1…20,
``max_features`` in [0.05, 1], ``criterion`` {gini, entropy, log_loss}, ``bootstrap`` {True, False};
objective the misclassification rate of 3-fold stratified cross-validation with fixed folds; one
constraint: the forest's total number of tree nodes (mean over the folds) at most 2 000, as
``nodes / 2000 − 1 ≤ 0``. Forests seeded with 0, one thread; about 0.1 s per evaluation. No known
optimum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Float, Integer, MixedSpace
from mixbo_compare.problems.problem import Problem

_INSTALL_HINT = "forest-size needs scikit-learn: pip install 'mixbo[benchmarks]'"
THICKNESS_STEP = 0.0625
NODE_BUDGET = 2000


def _vessel(c: Mapping[str, Any]) -> tuple[float, list[float]]:
    ts, th = THICKNESS_STEP * c["ts"], THICKNESS_STEP * c["th"]
    r, length = c["R"], c["L"]
    cost = 0.6224 * ts * r * length + 1.7781 * th * r**2 + 3.1661 * ts**2 * length
    cost += 19.84 * ts**2 * r
    volume = math.pi * r**2 * length + 4.0 / 3.0 * math.pi * r**3
    return cost, [
        -ts + 0.0193 * r,
        -th + 0.00954 * r,
        (1_296_000 - volume) / 1_296_000,
        (length - 240.0) / 240.0,
    ]


def pressure_vessel() -> Problem:
    space = MixedSpace(
        [
            Integer("ts", 1, 99),
            Integer("th", 1, 99),
            Float("R", 10.0, 200.0),
            Float("L", 10.0, 200.0),
        ]
    )
    return Problem(
        "pressure-vessel",
        space,
        lambda c: _vessel(c)[0],
        optimum=6059.714,
        constraints=lambda c: _vessel(c)[1],
    )


class ForestSize:
    """Callable ``config -> (CV error, mean node count)`` with the folds precomputed, memoised
    so that the objective and the constraint share one fit."""

    def __init__(self) -> None:
        try:
            from sklearn.datasets import load_breast_cancer
            from sklearn.model_selection import StratifiedKFold
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(_INSTALL_HINT) from exc
        self.X, self.y = load_breast_cancer(return_X_y=True)
        self.folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(self.X, self.y))
        self._last: tuple[tuple, tuple[float, float]] | None = None

    def evaluate(self, c: Mapping[str, Any]) -> tuple[float, float]:
        from sklearn.ensemble import RandomForestClassifier

        key = tuple(sorted((k, repr(v)) for k, v in c.items()))
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        errors, nodes = [], []
        for train, test in self.folds:
            forest = RandomForestClassifier(
                n_estimators=c["n_estimators"],
                max_depth=c["max_depth"],
                max_features=c["max_features"],
                criterion=c["criterion"],
                bootstrap=c["bootstrap"],
                random_state=0,
                n_jobs=1,
            ).fit(self.X[train], self.y[train])
            errors.append(np.mean(forest.predict(self.X[test]) != self.y[test]))
            nodes.append(sum(tree.tree_.node_count for tree in forest.estimators_))
        result = (float(np.mean(errors)), float(np.mean(nodes)))
        self._last = (key, result)
        return result


def forest_size() -> Problem:
    forest = ForestSize()
    space = MixedSpace(
        [
            Integer("n_estimators", 1, 100),
            Integer("max_depth", 1, 20),
            Float("max_features", 0.05, 1.0),
            Categorical("criterion", ("gini", "entropy", "log_loss")),
            Categorical("bootstrap", (True, False)),
        ]
    )
    return Problem(
        "forest-size",
        space,
        lambda c: forest.evaluate(c)[0],
        constraints=lambda c: [forest.evaluate(c)[1] / NODE_BUDGET - 1.0],
    )
