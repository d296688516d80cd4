"""Multi-objective studies as single-objective ones: ParEGO's random augmented Chebyshev weights.

ParEGO (Knowles, "ParEGO: a hybrid algorithm with on-line landscape approximation for expensive
multiobjective optimization problems", IEEE TEC 2006) turns each suggestion of a multi-objective
study into a single-objective one: the objectives (all minimised) are normalised, a weight vector
``w`` is drawn for this suggestion, and the method models

    s(y) = max_i w_i y_i + rho * sum_i w_i y_i,   rho = 0.05,

the augmented Chebyshev function, whose minimisers are Pareto optimal (the augmentation rules out
weakly dominated ones) and which reaches every point of the front, concave parts included, for
some ``w``. CoCaBO and BO-FM then run unchanged on the scalar history (their own acquisition,
bandits, constraints and busy points), at one GP fit per suggestion. CASMOPOLITAN (and so
``MixboSampler``) keeps the scalarisation for its trust region only (centre and size) and scores
the candidates by the expected hypervolume improvement of one GP per objective
(:mod:`common.acquisition.hypervolume`); the per-objective values stay in the history for it.

Departures from the paper (docs/decisions.md): the weights are drawn uniformly from the simplex
(Dirichlet(1)) rather than from ParEGO's fixed lattice; each objective is scaled so that the
current non-dominated set spans [0, 1] (from the best value to the front's worst; ParEGO uses the
whole observed range), so a weight's ray splits the front itself rather than a box stretched by
dominated trials; in a constrained study the reference is the feasible trials (all trials before
the first feasible one).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from common.space.history import History

RHO = 0.05  # ParEGO's augmentation


def non_dominated(y: np.ndarray) -> np.ndarray:
    """Which rows of ``y`` (n, m; minimised) no other row dominates (equal rows all kept):
    BoTorch's ``is_non_dominated``, which maximises (imported here: building a history loads no
    torch)."""
    import torch
    from botorch.utils.multi_objective.pareto import is_non_dominated

    minimised = torch.as_tensor(np.asarray(y, dtype=float))
    return is_non_dominated(-minimised, deduplicate=False).numpy()


def normalized(objectives: np.ndarray, reference: np.ndarray | None = None) -> np.ndarray:
    """``objectives`` (n, m) scaled per column so that the non-dominated rows of the ``reference``
    rows (a boolean mask; all rows if ``None`` or none selected) span [0, 1]: 0 at the best value,
    1 at the front's worst. Dominated rows may exceed 1. A column the front does not spread (a
    front of one point) is scaled by the reference rows' whole range; a constant one becomes 0.
    """
    y = np.asarray(objectives, dtype=float)
    ref = y if reference is None or not np.any(reference) else y[np.asarray(reference, bool)]
    if not len(ref):
        return np.zeros_like(y)
    lo = ref.min(axis=0)
    hi = ref[non_dominated(ref)].max(axis=0)
    hi = np.where(hi > lo, hi, ref.max(axis=0))
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.where(hi > lo, (y - lo) / span, 0.0)


def random_weights(m: int, rng: np.random.Generator) -> np.ndarray:
    """A weight vector drawn uniformly from the (m - 1)-simplex (Dirichlet(1))."""
    return rng.dirichlet(np.ones(m))


def chebyshev(y: np.ndarray, weights: np.ndarray, rho: float = RHO) -> np.ndarray:
    """Each row's augmented Chebyshev value ``max_i w_i y_i + rho * sum_i w_i y_i``."""
    weighted = np.asarray(y, dtype=float) * np.asarray(weights, dtype=float)
    return weighted.max(axis=1) + rho * weighted.sum(axis=1)


def scalarize(history: History, weights: np.ndarray) -> np.ndarray:
    """The scalar values of a multi-objective ``history`` under ``weights``: its objectives
    normalised to their front (the feasible trials' front in a constrained study), then augmented
    Chebyshev."""
    reference = history.feasible if history.constrained else None
    return chebyshev(normalized(history.objectives, reference), weights)


def single_objective(history: History, rng: np.random.Generator) -> History:
    """``history`` as the single-objective history one suggestion models: a multi-objective one's
    ``values`` scalarised with weights drawn from ``rng`` (the suggestion's own generator), its
    ``objectives`` kept for methods that model each; any other returned as it is."""
    if history.n_objectives < 2:
        return history
    values = scalarize(history, random_weights(history.n_objectives, rng))
    return dataclasses.replace(history, values=values)
