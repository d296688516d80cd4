"""Target warpings: what a GP is fitted to instead of the raw objective values.

Gaussian-copula ranks (CASMOPOLITAN's reference code), a Box-Cox power transform (as HEBO), or
their blend (:data:`WARPINGS`), each followed by z-scores; constraint values keep their sign
(:func:`constraint_standardise`). :func:`warping_log_jacobian` gives the evidence of the values
themselves, so that fits to differently warped targets can be compared.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def standardise(values: np.ndarray) -> np.ndarray:
    """Gaussian-copula standardisation: ranks mapped to normal quantiles, then zero mean, unit std.

    As in CASMOPOLITAN's reference; a few huge values (common on benchmark edges and with diverging
    training runs) then no longer flatten the differences near the optimum. Ties share a rank.
    """
    from scipy.special import ndtri  # the normal quantile; scipy.stats costs a new worker 0.2 s

    values = np.asarray(values, dtype=float)
    z = ndtri((average_ranks(values) - 0.5) / len(values))
    std = float(np.std(z))
    return (z - np.mean(z)) / (std if std > 1e-12 else 1.0)


def power_standardise(values: np.ndarray) -> np.ndarray:
    """A Box-Cox power transform (Box and Cox 1964, as HEBO warps its targets), then z-scores.

    The transform is of ``1 + (y − min y) / std(y)``, so it does not depend on the objective's
    offset or units, and its exponent maximises the likelihood of normal transformed values.
    Unlike the copula's ranks it keeps how much worse a value is: a neighbour of the incumbent
    that is far worse looks far worse. Non-finite or constant values fall back to the copula.
    """
    warped, _ = _power_with_slope(values)
    return standardise(values) if warped is None else warped


def _power_with_slope(values: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """:func:`power_standardise`'s z-scores and their derivative at each value (``None`` twice
    where it falls back to the copula)."""
    values = np.asarray(values, dtype=float)
    std = float(np.std(values)) if np.all(np.isfinite(values)) else 0.0
    if len(values) >= 3 and std > 1e-12:
        x = 1.0 + (values - values.min()) / std
        exponent = _box_cox_exponent(values, std)
        warped = _box_cox(x, exponent)
        spread = float(np.std(warped))
        if np.all(np.isfinite(warped)) and spread > 1e-12:
            return (warped - warped.mean()) / spread, x ** (exponent - 1.0) / (std * spread)
    return None, None


def _box_cox(x: np.ndarray, exponent: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.log(x) if abs(exponent) < 1e-8 else (x**exponent - 1.0) / exponent


def _box_cox_exponent(values: np.ndarray, std: float) -> float:
    """The maximum-likelihood Box-Cox exponent in [−5, 5] for ``1 + (values − min) / std``.

    ``scipy.stats.boxcox_normmax`` maximises the same likelihood, but importing ``scipy.stats``
    costs a new worker's first suggestion 0.2 s of CPU; this is a bounded scalar search.
    """
    from scipy.optimize import minimize_scalar

    x = 1.0 + (values - values.min()) / std
    log_jacobian = float(np.log(x).sum())

    def negative_log_likelihood(exponent: float) -> float:
        var = float(np.var(_box_cox(x, exponent)))
        if not np.isfinite(var) or var <= 0:
            return np.inf
        return 0.5 * len(x) * np.log(var) - (exponent - 1.0) * log_jacobian

    return float(minimize_scalar(negative_log_likelihood, bounds=(-5.0, 5.0), method="bounded").x)


def blend_standardise(values: np.ndarray) -> np.ndarray:
    """The mean of the copula's and the power transform's z-scores, z-scored again.

    Each alone loses something the search needs: the copula's ranks keep near-equal values near
    the optimum apart (a plateau's or a table's near-ties) but say nothing of how much worse a
    value is, and the power transform keeps magnitudes but can merge near-ties. Their mean is
    again an increasing function of the values (the order is kept) and keeps half of each.
    """
    blend = standardise(values) + power_standardise(values)
    spread = float(np.std(blend))
    return (blend - np.mean(blend)) / (spread if spread > 1e-12 else 1.0)


WARPINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "copula": standardise,
    "blend": blend_standardise,
    "power": power_standardise,
}


def warping_log_jacobian(warping: str, values: np.ndarray) -> float:
    """The mean log-derivative of :data:`WARPINGS` ``[warping]`` at ``values``.

    A GP of warped targets is a model of the values themselves once its likelihood is multiplied
    by the warping's derivative at each value (the warped GP of Snelson, Rasmussen and Ghahramani
    2004), so fits to differently warped targets are compared by their objective per observation
    minus this. The copula's rank map has no derivative: its slope is an m-spacing estimate
    (:func:`_copula_slope`), whose ties carry their joint mass, so no value has an infinite
    density.
    """
    values = np.asarray(values, dtype=float)
    if warping == "copula":
        slope = _copula_slope(values)
    elif warping == "power":
        slope = _power_slope(values)
    else:  # blend_standardise: (copula + power) z-scored again
        copula, (power, power_slope) = standardise(values), _power_with_slope(values)
        if power is None:
            power, power_slope = copula, _copula_slope(values)
        spread = float(np.std(copula + power))
        slope = (_copula_slope(values) + power_slope) / (spread if spread > 1e-12 else 1.0)
    with np.errstate(divide="ignore"):
        return float(np.mean(np.log(slope)))


def _copula_slope(values: np.ndarray) -> np.ndarray:
    """:func:`standardise`'s derivative at each value: the rank map's slope between the distinct
    values ``m`` places to either side, ``m`` about half the root of their number (Vasicek's
    m-spacing density estimate: one spacing's slope is noisy, and its log biased upwards); 1
    where all values are equal."""
    from scipy.special import ndtri

    n = len(values)
    distinct, index = np.unique(values, return_inverse=True)
    if len(distinct) < 2:
        return np.ones(n)
    levels = (average_ranks(values) - 0.5) / n
    level = np.zeros(len(distinct))
    np.add.at(level, index, levels)
    level /= np.bincount(index)  # each distinct value's quantile level
    m = max(1, round(math.sqrt(len(distinct)) / 2))
    k = np.arange(len(distinct))
    left, right = np.maximum(k - m, 0), np.minimum(k + m, len(distinct) - 1)
    slope = (level[right] - level[left]) / (distinct[right] - distinct[left])
    z = ndtri(levels)
    density = np.exp(-0.5 * z**2) / math.sqrt(2.0 * math.pi)
    std = float(np.std(z))
    return slope[index] / (density * (std if std > 1e-12 else 1.0))


def _power_slope(values: np.ndarray) -> np.ndarray:
    """:func:`power_standardise`'s derivative at each value (the copula's where it falls back)."""
    _, slope = _power_with_slope(values)
    return _copula_slope(values) if slope is None else slope


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values``, tied values sharing their average rank (``rankdata``'s
    default, without importing ``scipy.stats``)."""
    values = np.asarray(values, dtype=float).reshape(-1)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts_group = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts_group) - 1
    counts = np.bincount(group)
    first = np.cumsum(counts) - counts  # 0-based position of each group's first member
    ranks = np.empty(len(values))
    ranks[order] = (first + (counts + 1) / 2.0)[group]
    return ranks


def _moments(values: np.ndarray) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    std = float(np.std(values))
    return float(np.mean(values)), std if std > 1e-12 else 1.0


def constraint_standardise(values: np.ndarray) -> np.ndarray:
    """A constraint's targets: zero mean and unit standard deviation, as Optuna's GPSampler
    standardises them. Unlike the objective's ranks (or any other warping), this keeps 0 an
    exact threshold on the model's scale (:func:`constraint_threshold`) and a linear constraint
    linear, so a stationary GP extrapolates it where the trials have not been."""
    mean, std = _moments(values)
    return (np.asarray(values, dtype=float) - mean) / std


def constraint_threshold(values: np.ndarray) -> float:
    """Where 0 lands on the negated :func:`constraint_standardise` scale of ``values``: the
    feasible side of the model is at or above it.

    Where feasible trials report exactly 0 (a violation amount, ``max(0, g)``, or a constraint
    that only some categories have, 0 for the others), the threshold lies past 0: halfway to the
    smallest violation observed, or half a standard deviation where none is. A GP that
    interpolates zeros predicts 0 there to within its noise, so "≤ 0 exactly" would be a coin
    toss, P(feasible) ≈ 0.5, at every point it is sure about; the margin keeps the same split of
    the observed values (feasible ones above, violations below) with those points on the
    feasible side.
    """
    values = np.asarray(values, dtype=float)
    mean, std = _moments(values)
    threshold = mean / std
    if (values == 0).any():
        violations = values[values > 0]
        margin = 0.5 * float(violations.min()) / std if len(violations) else 0.5
        threshold -= margin
    return threshold
