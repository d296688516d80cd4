"""Tuning one scikit-learn classifier on one bundled data set (``sk-MODEL-DATA``).

Real hyper-parameter tuning, small enough to run in a test: five models with mixed spaces of their
own on the four classification sets bundled with scikit-learn (no download): ``iris`` (150 × 4),
``wine`` (178 × 13), ``breast_cancer`` (569 × 30) and ``digits`` (1797 × 64). As for
``sklearn-models`` (:mod:`mixbo_compare.problems.conditional`): the objective is the
misclassification rate of 3-fold stratified cross-validation with fixed folds
(``StratifiedKFold(3, shuffle=True, random_state=0)``), features standardised inside each fold
(precomputed once per data set), models seeded with 0 and run on one thread. Deterministic; no
known optimum. Evaluations are memoised by configuration.

Models and spaces (``MODELS``), capped so that an evaluation stays short (see the costs below):

- ``svc``: ``C`` log [1e-3, 1e3], ``gamma`` log [1e-4, 10], ``kernel`` {rbf, poly, sigmoid},
  ``shrinking`` {True, False}; libsvm stopped after ``SVC_MAX_ITER`` iterations;
- ``rf``: ``n_estimators`` [5, 25] (not 60: a forest's cost grows with it), ``max_depth``
  [1, 20], ``max_features`` [0.1, 1], ``criterion`` {gini, entropy}, ``bootstrap`` {True, False};
- ``hgb`` (histogram gradient boosting, no early stopping, ``HGB_MAX_BINS`` bins):
  ``learning_rate`` log [1e-3, 1], ``max_iter`` [5, 20] (digits' ten classes make ten trees an
  iteration), ``max_leaf_nodes`` [2, 32], ``l2_regularization`` log [1e-6, 10];
- ``knn``: ``n_neighbors`` [1, 40], ``weights`` {uniform, distance}, ``p`` {1, 2};
- ``logreg``: ``C`` log [1e-4, 1e3], ``penalty`` {l1, l2}, ``fit_intercept`` {True, False},
  ``class_weight`` {none, balanced} (the string "none" stands for None, which Optuna's
  categorical cannot hold). Solver saga, ``LOGREG_MAX_ITER`` epochs: the one solver that fits
  both penalties on several classes at once (liblinear refuses more than two classes from
  scikit-learn 1.8, and one-vs-rest liblinear with l1 takes about 2 s a fold on digits).

Cost of one evaluation (three fits), CPU seconds, median of 10 random configurations on one core
(scikit-learn 1.9): on iris, wine and breast cancer 0.02-0.03 for svc, knn and logreg, 0.07-0.08
for hgb, 0.13-0.18 for rf; on digits knn 0.06, logreg 0.21, rf 0.39, svc 0.42 and hgb 0.73 (worst
1.2). Digits' ten classes make gradient boosting and one-against-one SVMs dear: budget for it.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Float, Integer, MixedSpace, Parameter
from mixbo_compare.problems.problem import Problem

_INSTALL_HINT = "sk-MODEL-DATA problems need scikit-learn: pip install 'mixbo[benchmarks]'"

DATASETS = ("iris", "wine", "breast_cancer", "digits")
SVC_MAX_ITER = 20_000
HGB_MAX_BINS = 32
LOGREG_MAX_ITER = 20

MODELS: dict[str, tuple[Parameter, ...]] = {
    "svc": (
        Float("C", 1e-3, 1e3, log=True),
        Float("gamma", 1e-4, 10.0, log=True),
        Categorical("kernel", ("rbf", "poly", "sigmoid")),
        Categorical("shrinking", (True, False)),
    ),
    "rf": (
        Integer("n_estimators", 5, 25),
        Integer("max_depth", 1, 20),
        Float("max_features", 0.1, 1.0),
        Categorical("criterion", ("gini", "entropy")),
        Categorical("bootstrap", (True, False)),
    ),
    "hgb": (
        Float("learning_rate", 1e-3, 1.0, log=True),
        Integer("max_iter", 5, 20),
        Integer("max_leaf_nodes", 2, 32),
        Float("l2_regularization", 1e-6, 10.0, log=True),
    ),
    "knn": (
        Integer("n_neighbors", 1, 40),
        Categorical("weights", ("uniform", "distance")),
        Categorical("p", (1, 2)),
    ),
    "logreg": (
        Float("C", 1e-4, 1e3, log=True),
        Categorical("penalty", ("l1", "l2")),
        Categorical("fit_intercept", (True, False)),
        Categorical("class_weight", ("none", "balanced")),
    ),
}


@functools.cache
def standardised_folds(dataset: str) -> tuple[tuple[np.ndarray, ...], ...]:
    """``(X_train, y_train, X_test, y_test)`` per fold, scaled by the training rows' statistics."""
    if dataset not in DATASETS:
        raise ValueError(f"sk: unknown data set {dataset!r}; choose one of {', '.join(DATASETS)}.")
    try:
        from sklearn import datasets
        from sklearn.model_selection import StratifiedKFold
        from sklearn.preprocessing import StandardScaler
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    X, y = getattr(datasets, f"load_{dataset}")(return_X_y=True)
    folds = []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
        scaler = StandardScaler().fit(X[train])
        folds.append((scaler.transform(X[train]), y[train], scaler.transform(X[test]), y[test]))
    return tuple(folds)


def make_model(model: str, c: Mapping[str, Any]) -> Any:
    """The unfitted estimator of ``model`` for configuration ``c`` (seeded, one thread)."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC

    if model == "svc":
        return SVC(
            C=c["C"],
            gamma=c["gamma"],
            kernel=c["kernel"],
            shrinking=c["shrinking"],
            max_iter=SVC_MAX_ITER,
            random_state=0,
        )
    if model == "rf":
        return RandomForestClassifier(
            n_estimators=c["n_estimators"],
            max_depth=c["max_depth"],
            max_features=c["max_features"],
            criterion=c["criterion"],
            bootstrap=c["bootstrap"],
            random_state=0,
            n_jobs=1,
        )
    if model == "hgb":
        return HistGradientBoostingClassifier(
            learning_rate=c["learning_rate"],
            max_iter=c["max_iter"],
            max_leaf_nodes=c["max_leaf_nodes"],
            l2_regularization=c["l2_regularization"],
            early_stopping=False,
            max_bins=HGB_MAX_BINS,
            random_state=0,
        )
    if model == "knn":
        return KNeighborsClassifier(
            n_neighbors=c["n_neighbors"], weights=c["weights"], p=c["p"], n_jobs=1
        )
    return LogisticRegression(
        C=c["C"],
        l1_ratio=1.0 if c["penalty"] == "l1" else 0.0,
        fit_intercept=c["fit_intercept"],
        class_weight=None if c["class_weight"] == "none" else c["class_weight"],
        solver="saga",
        max_iter=LOGREG_MAX_ITER,
        random_state=0,
    )


class SklearnTask:
    """Callable ``config -> 3-fold CV error`` of one model on one data set, memoised."""

    def __init__(self, model: str, dataset: str):
        if model not in MODELS:
            raise ValueError(f"sk: unknown model {model!r}; choose one of {', '.join(MODELS)}.")
        self.model = model
        self.dataset = dataset
        self.folds = standardised_folds(dataset)
        self.names = tuple(p.name for p in MODELS[model])
        self.cache: dict[tuple[Any, ...], float] = {}

    def __call__(self, config: Mapping[str, Any]) -> float:
        key = tuple(config[name] for name in self.names)
        if key not in self.cache:
            self.cache[key] = self._error(config)
        return self.cache[key]

    def _error(self, config: Mapping[str, Any]) -> float:
        from threadpoolctl import threadpool_limits

        errors = []
        with threadpool_limits(limits=1), warnings.catch_warnings():
            # a capped solver's result is used as it stands
            warnings.simplefilter("ignore")
            for X_train, y_train, X_test, y_test in self.folds:
                estimator = make_model(self.model, config).fit(X_train, y_train)
                errors.append(np.mean(estimator.predict(X_test) != y_test))
        return float(np.mean(errors))


def sklearn_task(model: str, dataset: str) -> Problem:
    """``model`` (svc, rf, hgb, knn, logreg) tuned on ``dataset`` (iris, wine, breast_cancer,
    digits): minimise the 3-fold CV misclassification rate."""
    task = SklearnTask(model, dataset)
    return Problem(f"sk-{model}-{dataset}", MixedSpace(list(MODELS[model])), task)
