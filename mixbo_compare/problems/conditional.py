"""Conditional benchmark problems: which parameters exist depends on others.

``jenatton``: the tree-structured function of Jenatton, Archambeau, González and Seeger, "Bayesian
optimization with tree-structured dependencies" (ICML 2017). A binary root ``x1`` selects a
binary child (``x2`` if 0, ``x3`` if 1); each of the four leaves has its own continuous parameter
(``x4``…``x7`` in [−1, 1]) and each side of the root a shared one (``x8`` left, ``x9`` right, in
[0, 1]):

    f = x4² + 0.1 + x8   (x1 = 0, x2 = 0)       f = x6² + 0.3 + x9   (x1 = 1, x3 = 0)
    f = x5² + 0.2 + x8   (x1 = 0, x2 = 1)       f = x7² + 0.4 + x9   (x1 = 1, x3 = 1)

Minimum 0.1 at x1 = x2 = 0, x4 = 0, x8 = 0. Deterministic, microseconds per evaluation.

``sklearn-models``: model selection with each model's own hyper-parameters on scikit-learn's
bundled breast-cancer data (569 × 30, no download): a support vector classifier (``svc_C``,
``svc_gamma``, log-scaled), a random forest (``rf_n_estimators``, ``rf_max_depth``,
``rf_max_features``), k nearest neighbours (``knn_n_neighbors``, ``knn_weights``) or logistic
regression (``lr_C``, log-scaled). Objective: the misclassification rate of 3-fold stratified
cross-validation with fixed folds (``StratifiedKFold(3, shuffle=True, random_state=0)``), features
standardised inside each fold; forests seeded with 0, one thread. No known optimum. About 0.05 s
per evaluation, up to 0.3 s for the largest forests, on one core.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Float, Integer, MixedSpace
from mixbo_compare.problems.problem import Problem

_INSTALL_HINT = "sklearn-models needs scikit-learn: pip install 'mixbo[benchmarks]'"


def _jenatton_value(c: Mapping[str, Any]) -> float:
    if c["x1"] == 0:
        leaf = 0.1 + c["x4"] ** 2 if c["x2"] == 0 else 0.2 + c["x5"] ** 2
        return leaf + c["x8"]
    leaf = 0.3 + c["x6"] ** 2 if c["x3"] == 0 else 0.4 + c["x7"] ** 2
    return leaf + c["x9"]


def _jenatton_ask(suggest: Callable[[str], Any]) -> dict[str, Any]:
    c = {"x1": suggest("x1")}
    child = "x2" if c["x1"] == 0 else "x3"
    c[child] = suggest(child)
    leaf = {("x2", 0): "x4", ("x2", 1): "x5", ("x3", 0): "x6", ("x3", 1): "x7"}[child, c[child]]
    c[leaf] = suggest(leaf)
    shared = "x8" if c["x1"] == 0 else "x9"
    c[shared] = suggest(shared)
    return c


def jenatton() -> Problem:
    params = [Categorical(n, (0, 1)) for n in ("x1", "x2", "x3")]
    params += [Float(f"x{i}", -1.0, 1.0) for i in range(4, 8)]
    params += [Float("x8", 0.0, 1.0), Float("x9", 0.0, 1.0)]
    return Problem("jenatton", MixedSpace(params), _jenatton_value, optimum=0.1, ask=_jenatton_ask)


class SklearnModels:
    """Callable ``config -> 3-fold CV error`` with the folds precomputed."""

    def __init__(self) -> None:
        try:
            from sklearn.datasets import load_breast_cancer
            from sklearn.model_selection import StratifiedKFold
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(_INSTALL_HINT) from exc
        self.X, self.y = load_breast_cancer(return_X_y=True)
        folds = StratifiedKFold(3, shuffle=True, random_state=0)
        self.folds = list(folds.split(self.X, self.y))

    @staticmethod
    def model(c: Mapping[str, Any]):
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.neighbors import KNeighborsClassifier
        from sklearn.svm import SVC

        if c["model"] == "svc":
            return SVC(C=c["svc_C"], gamma=c["svc_gamma"])
        if c["model"] == "rf":
            return RandomForestClassifier(
                n_estimators=c["rf_n_estimators"],
                max_depth=c["rf_max_depth"],
                max_features=c["rf_max_features"],
                random_state=0,
                n_jobs=1,
            )
        if c["model"] == "knn":
            return KNeighborsClassifier(n_neighbors=c["knn_n_neighbors"], weights=c["knn_weights"])
        return LogisticRegression(C=c["lr_C"], max_iter=2000)

    def __call__(self, c: Mapping[str, Any]) -> float:
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        errors = []
        for train, test in self.folds:
            pipe = make_pipeline(StandardScaler(), self.model(c))
            pipe.fit(self.X[train], self.y[train])
            errors.append(np.mean(pipe.predict(self.X[test]) != self.y[test]))
        return float(np.mean(errors))


_BRANCHES = {
    "svc": ("svc_C", "svc_gamma"),
    "rf": ("rf_n_estimators", "rf_max_depth", "rf_max_features"),
    "knn": ("knn_n_neighbors", "knn_weights"),
    "lr": ("lr_C",),
}


def _sklearn_ask(suggest: Callable[[str], Any]) -> dict[str, Any]:
    c = {"model": suggest("model")}
    for name in _BRANCHES[c["model"]]:
        c[name] = suggest(name)
    return c


def sklearn_models() -> Problem:
    space = MixedSpace(
        [
            Categorical("model", tuple(_BRANCHES)),
            Float("svc_C", 1e-3, 1e3, log=True),
            Float("svc_gamma", 1e-5, 1.0, log=True),
            Integer("rf_n_estimators", 5, 100),
            Integer("rf_max_depth", 1, 15),
            Float("rf_max_features", 0.05, 1.0),
            Integer("knn_n_neighbors", 1, 50),
            Categorical("knn_weights", ("uniform", "distance")),
            Float("lr_C", 1e-4, 1e3, log=True),
        ]
    )
    return Problem("sklearn-models", space, SklearnModels(), ask=_sklearn_ask)
