"""NuSVR on scikit-learn's bundled diabetes data, over BO-FM's "SVM-Boston" search space.

Source: the SVM-Boston task of BO-FM (Oh et al., frequency-modulated kernel BO), with the Boston
housing data (removed from scikit-learn 1.2) replaced by ``sklearn.datasets.load_diabetes``
(442 x 10, regression, bundled: no download).

Space: ``kernel`` {linear, poly, rbf, sigmoid}, ``gamma`` {scale, auto}, ``shrinking`` {True, False}
(categorical), and log-scaled ``C`` in [1e-4, 10], ``tol`` in [1e-6, 1], ``nu`` in [1e-6, 1]
(BO-FM searches their log10 over [-4, 1], [-6, 0], [-6, 0]). ``gamma`` has no effect with the
linear kernel. Other NuSVR settings are scikit-learn's defaults (poly degree 3, coef0 0).

Objective (minimised): mean test RMSE over 5 splits; split k = 0..4 shuffles the row indices with
``numpy.random.RandomState(k**2)`` and trains on the first 70 % (309 rows), tests on the rest.
Features are standardised with a ``StandardScaler`` fitted on the training rows (precomputed once);
the target is left in its original units. Deterministic. No known optimum.

Run time: about 5 ms median, 15 ms p90 for all five fits (1000 random configurations). libsvm is
capped at ``MAX_ITER`` = 100 000 iterations per fit so that no configuration can run away (a capped
fit is used as it stands, its ConvergenceWarning silenced). The cap did not bind in those 1000
configurations (at most 23 000 iterations) nor at the slow corner (linear kernel, C = 10,
tol = 1e-6, no shrinking: up to 65 000 iterations, 0.4 s), so results equal uncapped NuSVR there.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Float, MixedSpace
from mixbo_compare.problems.problem import Problem

_INSTALL_HINT = "nusvr-diabetes needs scikit-learn: pip install 'mixbo[benchmarks]'"

MAX_ITER = 100_000
N_SPLITS = 5
TRAIN_FRACTION = 0.7


class NuSVRDiabetes:
    """Callable ``config -> mean test RMSE`` with the five standardised splits precomputed."""

    def __init__(self, max_iter: int = MAX_ITER):
        try:
            from sklearn.datasets import load_diabetes
            from sklearn.preprocessing import StandardScaler
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(_INSTALL_HINT) from exc
        X, y = load_diabetes(return_X_y=True)
        n_train = int(TRAIN_FRACTION * len(y))
        self.max_iter = max_iter
        self.splits: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        for k in range(N_SPLITS):
            order = np.random.RandomState(k**2).permutation(len(y))
            train, test = order[:n_train], order[n_train:]
            scaler = StandardScaler().fit(X[train])
            self.splits.append(
                (scaler.transform(X[train]), y[train], scaler.transform(X[test]), y[test])
            )

    def __call__(self, config: Mapping[str, Any]) -> float:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import NuSVR

        params = {
            "kernel": str(config["kernel"]),
            "gamma": str(config["gamma"]),
            "shrinking": bool(config["shrinking"]),
            "C": float(np.clip(config["C"], 1e-4, 10.0)),
            "tol": float(np.clip(config["tol"], 1e-6, 1.0)),
            "nu": float(np.clip(config["nu"], 1e-6, 1.0)),
        }
        rmse = []
        for X_train, y_train, X_test, y_test in self.splits:
            model = NuSVR(max_iter=self.max_iter, **params)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(X_train, y_train)
            residual = model.predict(X_test) - y_test
            rmse.append(float(np.sqrt(np.mean(residual**2))))
        return float(np.mean(rmse))


def nusvr_diabetes() -> Problem:
    """BO-FM's SVM-Boston space (NuSVR) on the bundled diabetes data; minimise mean test RMSE."""
    space = MixedSpace(
        [
            Categorical("kernel", ("linear", "poly", "rbf", "sigmoid")),
            Categorical("gamma", ("scale", "auto")),
            Categorical("shrinking", (True, False)),
            Float("C", 1e-4, 10.0, log=True),
            Float("tol", 1e-6, 1.0, log=True),
            Float("nu", 1e-6, 1.0, log=True),
        ]
    )
    return Problem("nusvr-diabetes", space, NuSVRDiabetes(), None)
