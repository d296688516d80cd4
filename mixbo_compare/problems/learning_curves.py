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

_INSTALL_HINT = "lc-sgd-digits needs scikit-learn: pip install 'mixbo[benchmarks]'"

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


# ------------------------------------------------------------------------------ SGD on digits
SGD_EPOCHS = 20
VALIDATION_FRACTION = 0.3


class SGDDigits:
    """Callable ``config -> iterator of validation errors``, one per epoch."""

    def __init__(self, epochs: int = SGD_EPOCHS) -> None:
        try:
            from sklearn.datasets import load_digits
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(_INSTALL_HINT) from exc
        X, y = load_digits(return_X_y=True)
        order = np.random.RandomState(0).permutation(len(y))
        n_val = int(VALIDATION_FRACTION * len(y))
        val, train = order[:n_val], order[n_val:]
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
