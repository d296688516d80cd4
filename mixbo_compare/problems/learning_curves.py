"""Learning-curve problems: objectives that report a value after each training step, for pruners.

A :class:`LearningCurveProblem` is a benchmark :class:`~mixbo_compare.problems.problem.Problem`
whose ``curve(config)`` yields the objective after each of its ``steps`` steps (an Optuna
objective reports each with ``trial.report`` and asks ``trial.should_prune()``); its value is
the last one.

- ``lc-sgd-digits``: a linear classifier (scikit-learn's ``SGDClassifier``) trained epoch by epoch
  with ``partial_fit`` on scikit-learn's bundled ``load_digits`` (1797 8x8 images, 10 classes);
  minimised: the validation error after each of 20 epochs (one ``partial_fit`` pass over the
  shuffled training rows each). Space: log-float ``eta0`` (constant learning rate) in [1e-5, 1]
  and ``alpha`` in [1e-7, 1e-1], log-int ``components`` in [2, 64] (the inputs projected on their
  leading principal components), categorical ``loss`` {hinge, log_loss, modified_huber,
  perceptron} and ``penalty`` {l2, l1, elasticnet}. Deterministic (fixed split, shuffles and
  ``random_state``); well under a second for a full training on one core.
- ``lc-powerlaw``: a simulator of a network's training curves, 50 steps. The validation loss
  decays as a power law, ``y(t) = a + (y0 - a) (1 + t / tau) ** -rate``, towards an asymptote
  ``a`` and at a speed set by the configuration: a large learning rate starts fast but levels
  off high; a small one, or a wide network, is slow but ends lower; the activation and the
  optimiser shift both (Domhan, Springenberg and Hutter, "Speeding up automatic hyperparameter
  optimization of deep neural networks by extrapolation of learning curves", IJCAI 2015, fit
  such curves). Curves cross, so a pruner can stop the best configurations early. Space:
  log-float ``lr`` in [1e-5, 1], log-int ``width`` in [8, 1024], categorical ``activation``
  {relu, gelu, tanh, sigmoid} and ``optimizer`` {sgd, momentum, adam}. Deterministic.
- ``lc-mlp-breast-cancer``: a one-hidden-layer network (scikit-learn's ``MLPClassifier``)
  trained epoch by epoch with ``partial_fit`` on scikit-learn's bundled ``load_breast_cancer``
  (569 tumours, 30 features standardised on the training rows, 2 classes); minimised: the
  validation log loss after each of 25 epochs (probabilities clipped to [1e-6, 1 - 1e-6]; a
  network whose weights overflowed predicts 0.5). The log loss, unlike the error rate of 171
  validation rows, rarely ties, and it rises again when a network grows overconfident. Space:
  log-float ``learning_rate_init`` in [1e-5, 1] and ``alpha`` (L2 penalty) in [1e-6, 1], log-int
  ``width`` (hidden units) in [2, 256] and ``batch_size`` in [16, 256], categorical
  ``activation`` {relu, tanh, logistic} and ``solver`` {sgd, adam} (sgd with momentum 0.9).
  Deterministic (fixed split and ``random_state``); well under a second for a full training on
  one core.
- ``lc-gbm-diabetes``: gradient-boosted regression trees (scikit-learn's
  ``GradientBoostingRegressor``) grown three stages at a time with ``warm_start`` on
  scikit-learn's bundled ``load_diabetes`` (442 patients, 10 features; the target standardised
  on the training rows); minimised: the validation RMSE after each of 20 steps (60 stages in
  all; 1 is the RMSE of predicting the training mean). Large learning rates and deep trees
  reach their best in a few stages and then overfit, so unlike the curves above these can rise
  again. Space: log-float ``learning_rate`` in [1e-3, 1], float ``subsample`` in [0.3, 1],
  int ``max_depth`` in [1, 8], log-int ``min_samples_leaf`` in [1, 64], categorical ``loss``
  {squared_error, absolute_error, huber} and ``max_features`` {all, sqrt}. Deterministic (fixed
  split and ``random_state``); well under a second for a full training on one core.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Float, Integer, MixedSpace
from mixbo_compare.problems.problem import Problem

_INSTALL_HINT = (
    "the lc-* problems but lc-powerlaw need scikit-learn: pip install 'mixbo[benchmarks]'"
)

Curve = Callable[[Mapping[str, Any]], Iterator[float]]


@dataclass(frozen=True)
class LearningCurveProblem(Problem):
    """A problem whose objective reports a value after each of ``steps`` steps (``curve``)."""

    steps: int = 1
    curve: Curve | None = None


def _last(curve: Curve) -> Callable[[Mapping[str, Any]], float]:
    def final(config: Mapping[str, Any]) -> float:
        values = list(curve(config))
        return values[-1] if values else math.nan

    return final


VALIDATION_FRACTION = 0.3


def _split(n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed (validation, training) rows of a bundled dataset."""
    order = np.random.RandomState(0).permutation(n_rows)
    n_val = int(VALIDATION_FRACTION * n_rows)
    return order[:n_val], order[n_val:]


def _dataset(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's bundled dataset ``load_<name>``: its inputs, targets, and the fixed
    validation and training rows (:func:`_split`)."""
    try:
        from sklearn import datasets
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL_HINT) from exc
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    val, train = _split(len(y))
    return X, y, val, train


# ------------------------------------------------------------------------------ SGD on digits
SGD_EPOCHS = 20


class SGDDigits:
    """Callable ``config -> iterator of validation errors``, one per epoch."""

    def __init__(self, epochs: int = SGD_EPOCHS) -> None:
        X, y, val, train = _dataset("digits")
        X = X / 16.0  # pixels in [0, 1]
        centre = X[train].mean(axis=0)
        _, _, axes = np.linalg.svd(X[train] - centre, full_matrices=False)
        X = (X - centre) @ axes.T  # principal components, leading first
        X /= X[train].std(axis=0) + 1e-12
        self.X_train, self.y_train = X[train], y[train]
        self.X_val, self.y_val = X[val], y[val]
        self.classes = np.unique(y)
        self.epochs = epochs

    def __call__(self, config: Mapping[str, Any]) -> Iterator[float]:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import SGDClassifier

        model = SGDClassifier(
            loss=config["loss"],
            penalty=config["penalty"],
            alpha=float(config["alpha"]),
            learning_rate="constant",
            eta0=float(config["eta0"]),
            random_state=0,
        )
        k = int(config["components"])
        X_train, X_val = self.X_train[:, :k], self.X_val[:, :k]
        shuffles = np.random.RandomState(1)
        for _ in range(self.epochs):
            rows = shuffles.permutation(len(self.y_train))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                warnings.simplefilter("ignore", RuntimeWarning)  # a diverging learning rate
                model.partial_fit(X_train[rows], self.y_train[rows], self.classes)
                accuracy = float(np.mean(model.predict(X_val) == self.y_val))
            yield 1.0 - accuracy


def sgd_digits() -> LearningCurveProblem:
    space = MixedSpace(
        [
            Float("eta0", 1e-5, 1.0, log=True),
            Float("alpha", 1e-7, 1e-1, log=True),
            Integer("components", 2, 64, log=True),
            Categorical("loss", ("hinge", "log_loss", "modified_huber", "perceptron")),
            Categorical("penalty", ("l2", "l1", "elasticnet")),
        ]
    )
    curve = SGDDigits()
    return LearningCurveProblem(
        "lc-sgd-digits", space, _last(curve), steps=curve.epochs, curve=curve
    )


# ---------------------------------------------------------------------------- MLP on breast cancer
MLP_EPOCHS = 25
_CLIP = 1e-6  # of the predicted probabilities in the log loss


class MLPBreastCancer:
    """Callable ``config -> iterator of validation log losses``, one per epoch."""

    def __init__(self, epochs: int = MLP_EPOCHS) -> None:
        X, y, val, train = _dataset("breast_cancer")
        X = (X - X[train].mean(axis=0)) / X[train].std(axis=0)
        self.X_train, self.y_train = X[train], y[train]
        self.X_val, self.y_val = X[val], y[val]
        self.classes = np.unique(y)
        self.epochs = epochs

    def __call__(self, config: Mapping[str, Any]) -> Iterator[float]:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier

        model = MLPClassifier(
            hidden_layer_sizes=(int(config["width"]),),
            activation=config["activation"],
            solver=config["solver"],
            alpha=float(config["alpha"]),
            batch_size=int(config["batch_size"]),
            learning_rate_init=float(config["learning_rate_init"]),
            momentum=0.9,
            random_state=0,
        )
        positive = self.y_val == self.classes[1]
        for _ in range(self.epochs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                warnings.simplefilter("ignore", RuntimeWarning)  # a diverging learning rate
                model.partial_fit(self.X_train, self.y_train, classes=self.classes)
                p = model.predict_proba(self.X_val)[:, 1]
            p = np.clip(np.nan_to_num(p, nan=0.5), _CLIP, 1 - _CLIP)
            yield float(-np.mean(np.where(positive, np.log(p), np.log1p(-p))))


def mlp_breast_cancer() -> LearningCurveProblem:
    space = MixedSpace(
        [
            Float("learning_rate_init", 1e-5, 1.0, log=True),
            Float("alpha", 1e-6, 1.0, log=True),
            Integer("width", 2, 256, log=True),
            Integer("batch_size", 16, 256, log=True),
            Categorical("activation", ("relu", "tanh", "logistic")),
            Categorical("solver", ("sgd", "adam")),
        ]
    )
    curve = MLPBreastCancer()
    return LearningCurveProblem(
        "lc-mlp-breast-cancer", space, _last(curve), steps=curve.epochs, curve=curve
    )


# ---------------------------------------------------------------------------- boosting on diabetes
GBM_STEPS = 20
GBM_STAGES_PER_STEP = 3
_MAX_FEATURES = {"all": None, "sqrt": "sqrt"}


class GBMDiabetes:
    """Callable ``config -> iterator of validation RMSEs``, one per ``stages_per_step`` stages."""

    def __init__(self, steps: int = GBM_STEPS, stages_per_step: int = GBM_STAGES_PER_STEP) -> None:
        X, y, val, train = _dataset("diabetes")
        y = (y - y[train].mean()) / y[train].std()
        self.X_train, self.y_train = X[train], y[train]
        self.X_val, self.y_val = X[val], y[val]
        self.steps, self.stages_per_step = steps, stages_per_step

    def __call__(self, config: Mapping[str, Any]) -> Iterator[float]:
        from sklearn.ensemble import GradientBoostingRegressor

        model = GradientBoostingRegressor(
            loss=config["loss"],
            learning_rate=float(config["learning_rate"]),
            subsample=float(config["subsample"]),
            max_depth=int(config["max_depth"]),
            min_samples_leaf=int(config["min_samples_leaf"]),
            max_features=_MAX_FEATURES[config["max_features"]],
            warm_start=True,  # each fit grows the next stages onto the trees so far
            random_state=0,
        )
        for step in range(1, self.steps + 1):
            model.set_params(n_estimators=step * self.stages_per_step)
            model.fit(self.X_train, self.y_train)
            residual = model.predict(self.X_val) - self.y_val
            yield float(np.sqrt(np.mean(residual**2)))


def gbm_diabetes() -> LearningCurveProblem:
    space = MixedSpace(
        [
            Float("learning_rate", 1e-3, 1.0, log=True),
            Float("subsample", 0.3, 1.0),
            Integer("max_depth", 1, 8),
            Integer("min_samples_leaf", 1, 64, log=True),
            Categorical("loss", ("squared_error", "absolute_error", "huber")),
            Categorical("max_features", tuple(_MAX_FEATURES)),
        ]
    )
    curve = GBMDiabetes()
    return LearningCurveProblem(
        "lc-gbm-diabetes", space, _last(curve), steps=curve.steps, curve=curve
    )


# ------------------------------------------------------------------------------ power-law curves
POWERLAW_STEPS = 50
_ACTIVATION = {"relu": 0.0, "gelu": -0.02, "tanh": 0.04, "sigmoid": 0.10}  # asymptote shift
_OPTIMIZER = {  # (best log10 learning rate, speed factor)
    "sgd": (-1.0, 1.0),
    "momentum": (-2.0, 2.0),
    "adam": (-3.0, 4.0),
}


def powerlaw_curve(config: Mapping[str, Any], steps: int = POWERLAW_STEPS) -> Iterator[float]:
    """The simulated validation loss after each step (see the module)."""
    best_lr, speed = _OPTIMIZER[config["optimizer"]]
    u = math.log10(float(config["lr"])) - best_lr  # 0 at the optimiser's best learning rate
    depth = math.log2(int(config["width"]) / 8) / 7  # 0 (width 8) .. 1 (width 1024)
    # asymptote: too large a learning rate levels off high, too small one too (more gently)
    asymptote = 0.05 + 0.12 * max(u, 0) ** 2 + 0.03 * min(u, 0) ** 2
    asymptote += 0.15 * (1 - depth) + _ACTIVATION[config["activation"]]
    # speed: large learning rates and narrow networks converge fast
    tau = 4.0 * 10 ** (-(u + 0.5)) * (1 + 3 * depth) / speed
    rate = 0.6 + 0.3 * depth
    start = 2.3  # the loss of a uniform guess over 10 classes
    for t in range(1, steps + 1):
        yield asymptote + (start - asymptote) * (1 + t / tau) ** -rate


def powerlaw() -> LearningCurveProblem:
    space = MixedSpace(
        [
            Float("lr", 1e-5, 1.0, log=True),
            Integer("width", 8, 1024, log=True),
            Categorical("activation", tuple(_ACTIVATION)),
            Categorical("optimizer", tuple(_OPTIMIZER)),
        ]
    )
    return LearningCurveProblem(
        "lc-powerlaw", space, _last(powerlaw_curve), steps=POWERLAW_STEPS, curve=powerlaw_curve
    )
