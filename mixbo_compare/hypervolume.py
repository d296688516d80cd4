"""Normalised hypervolume of a set of objective vectors (all minimised), via BoTorch.

The objectives are scaled by fixed bounds, ``(f - ideal) / (nadir - ideal)``, so that the ideal
point is 0 and the nadir point 1 in every coordinate; the hypervolume is that of the region
dominated by the feasible points and bounded by the reference point ``(r, ..., r)`` (r = 1.1 by
default), so a point at or beyond the reference in any coordinate adds nothing. With these
bounds the true front's hypervolume is at most ``r**m``. BoTorch's ``Hypervolume`` (exact, any
number of objectives; it maximises, so the scaled objectives are negated) does the counting.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from botorch.utils.multi_objective.hypervolume import Hypervolume
from botorch.utils.multi_objective.pareto import is_non_dominated


def normalise(objectives: np.ndarray, ideal: Sequence[float], nadir: Sequence[float]) -> np.ndarray:
    """Each objective scaled so that ``ideal`` maps to 0 and ``nadir`` to 1."""
    lo, hi = np.asarray(ideal, dtype=float), np.asarray(nadir, dtype=float)
    return (np.asarray(objectives, dtype=float) - lo) / (hi - lo)


def non_dominated(points: np.ndarray) -> np.ndarray:
    """Mask of the points (rows, minimised) that no other point dominates; duplicates are kept
    once."""
    points = np.asarray(points, dtype=float)
    if not len(points):
        return np.zeros(0, dtype=bool)
    mask = is_non_dominated(-torch.as_tensor(points), deduplicate=True)
    return mask.numpy()


def hypervolume(points: np.ndarray, reference: float = 1.1) -> float:
    """Hypervolume of normalised, minimised ``points`` (rows) up to ``(reference, ...)``.

    Rows with a NaN (failed or infeasible trials are passed as NaN) and rows not strictly
    better than the reference in every coordinate count for nothing.
    """
    points = np.asarray(points, dtype=float)
    if points.ndim != 2 or not len(points):
        return 0.0
    inside = np.all(np.isfinite(points), axis=1) & np.all(points < reference, axis=1)
    points = points[inside]
    if not len(points):
        return 0.0
    points = points[non_dominated(points)]
    m = points.shape[1]
    ref = torch.full((m,), -float(reference), dtype=torch.double)
    return float(Hypervolume(ref).compute(-torch.as_tensor(points, dtype=torch.double)))


def hypervolume_curve(points: np.ndarray, reference: float = 1.1) -> np.ndarray:
    """Hypervolume of the first ``n`` rows of ``points``, for every ``n`` (rows in order of
    completion, NaN rows count for nothing); recomputed only when a row enters the front."""
    points = np.asarray(points, dtype=float)
    curve = np.zeros(len(points))
    front = np.empty((0, points.shape[1] if points.ndim == 2 else 0))
    value = 0.0
    for i, p in enumerate(points):
        useful = np.all(np.isfinite(p)) and np.all(p < reference)
        if useful and not np.any(np.all(front <= p, axis=1)):  # p is not weakly dominated
            front = np.vstack([front[~np.all(p <= front, axis=1)], p])
            value = hypervolume(front, reference)
        curve[i] = value
    return curve
