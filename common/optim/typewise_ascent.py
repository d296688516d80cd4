"""Type-wise alternating ascent of an acquisition function over graphs and a box.

BO-FM's acquisition optimiser (Oh, Gavves, Welling, "Mixed variable Bayesian optimization with
frequency modulated kernels", UAI 2021; detailed in C. Oh, "Bayesian optimization on
non-conventional search spaces", PhD thesis, University of Amsterdam, 2023, App. C.2.1, and in the
authors' code): from several starts, alternate one best-improvement hill-climbing step over the
graph neighbours of the discrete part (change one discrete value to an adjacent one: all other
choices of a categorical, ±1 of an ordinal, the user's edges otherwise) with a few L-BFGS-B steps on
the continuous part, until no discrete move improves; then polish the continuous part. (The
reference alternates single L-BFGS-B iterations until neither step improves; restarting L-BFGS-B
each round costs more than it gains, so the continuous part gets its longer run once, at the end.)

The work is bounded by counts only (rounds, L-BFGS-B iterations, neighbours), never by a clock,
so the result is a deterministic function of the inputs and the generator under any machine load.

Both steps are batched over all starts: one acquisition call scores every neighbour of every
start, and one L-BFGS-B run (:func:`common.optim.continuous.ascend`, each start's discrete
columns
fixed) moves all continuous parts. BoTorch's own ``optimize_acqf_mixed_alternating`` is not used:
it draws its random starts, spray points and neighbour subsets from the global torch RNG, and it
knows only ordinal (±1) and categorical (all values) neighbourhoods, not user graphs.

>>> Z, values = typewise_ascent(acqf, layout, starts, rng)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from botorch.acquisition import AcquisitionFunction

from common.acquisition.functions import evaluate
from common.models.kernels.frequency_modulated import FMLayout
from common.optim.continuous import ascend

MAX_ROUNDS = 20  # discrete + continuous rounds; an ascent typically settles within 3 to 5
CONT_MAXITER = 5  # L-BFGS-B iterations per continuous step (the reference takes 1)
POLISH_MAXITER = 25  # L-BFGS-B iterations once no discrete move improves any more
MAX_NEIGHBOURS = 64  # per graph and start; larger neighbourhoods are subsampled
TOL = 1e-6  # improvement of the (log) acquisition that counts as a move


def neighbours(
    layout: FMLayout, Z: np.ndarray, rng: np.random.Generator, max_neighbours: int = MAX_NEIGHBOURS
) -> tuple[np.ndarray, np.ndarray]:
    """1-hop graph neighbours of the rows of ``Z``: ``(rows, owner)``, ``owner[k]`` their row."""
    rows, owner = [], []
    for s, z in enumerate(Z):
        for col, graph in zip(layout.graph_cols, layout.graphs, strict=True):
            adjacent = graph.neighbours_of(z[col])
            if len(adjacent) > max_neighbours:
                adjacent = rng.choice(adjacent, size=max_neighbours, replace=False)
            block = np.repeat(z[None], len(adjacent), axis=0)
            block[:, col] = adjacent
            rows.append(block)
            owner.append(np.full(len(adjacent), s))
    if not rows:
        return np.empty((0, Z.shape[1])), np.empty(0, dtype=int)
    return np.concatenate(rows), np.concatenate(owner)


def typewise_ascent(
    acqf: AcquisitionFunction,
    layout: FMLayout,
    starts: np.ndarray,
    rng: np.random.Generator,
    *,
    forbidden: Callable[[np.ndarray], np.ndarray] | None = None,
    max_rounds: int = MAX_ROUNDS,
) -> tuple[np.ndarray, np.ndarray]:
    """Local optima of ``acqf`` from each start (model rows of ``layout``) and their values.

    ``forbidden(rows) -> bool mask`` marks rows the discrete step must not move to (e.g. already
    evaluated configurations in a purely discrete space). The work is bounded by ``max_rounds``
    rounds of at most ``CONT_MAXITER`` L-BFGS-B iterations each, then a ``POLISH_MAXITER`` polish.
    """
    Z = np.array(starts, dtype=float, copy=True)
    values = evaluate(acqf, Z)
    cont = list(layout.cont_cols)
    for round_ in range(max_rounds):
        moved = np.zeros(len(Z), dtype=bool)
        if layout.graphs:
            moved |= _discrete_step(acqf, layout, Z, values, rng, forbidden)
        if round_ > 0 and not moved.any():
            break  # the discrete parts are local optima for the current continuous parts
        if cont:
            _continuous_step(acqf, layout, Z, values, CONT_MAXITER)
    if cont:  # polish with the discrete parts settled
        _continuous_step(acqf, layout, Z, values, POLISH_MAXITER)
    return Z, values


def _discrete_step(acqf, layout, Z, values, rng, forbidden) -> np.ndarray:
    """One best-improvement move per start over its graph neighbours (in place)."""
    rows, owner = neighbours(layout, Z, rng)
    if not len(rows):
        return np.zeros(len(Z), dtype=bool)
    scores = evaluate(acqf, rows)
    if forbidden is not None:
        scores[forbidden(rows)] = -np.inf
    best = np.full(len(Z), -np.inf)
    np.maximum.at(best, owner, scores)
    moved = best > values + TOL
    if moved.any():
        order = np.lexsort((-scores, owner))  # by start, best neighbour first
        first = order[np.r_[True, owner[order][1:] != owner[order][:-1]]]
        for k in first:
            s = owner[k]
            if moved[s]:
                Z[s], values[s] = rows[k], scores[k]
    return moved


def _continuous_step(acqf, layout, Z, values, maxiter: int) -> np.ndarray:
    """``maxiter`` L-BFGS-B iterations on every start's continuous columns (in place)."""
    cont = list(layout.cont_cols)
    try:
        new, new_values = ascend(acqf, Z, cont, np.zeros(len(cont)), np.ones(len(cont)), maxiter)
    except Exception:  # a failed gradient step leaves the starts where they are
        return np.zeros(len(Z), dtype=bool)
    new_values = np.nan_to_num(new_values, nan=-np.inf)
    moved = new_values > values + TOL
    Z[moved], values[moved] = new[moved], new_values[moved]
    return moved
