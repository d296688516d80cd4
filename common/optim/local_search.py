"""Maximising an acquisition inside a trust region: Hamming-ball local search, interleaved search.

CASMOPOLITAN's acquisition optimisers (Wan et al., "Think global and act local: Bayesian
optimisation over high-dimensional categorical and mixed search spaces", ICML 2021; also B. Ru,
"Bayesian Optimisation for Automated Machine Learning", DPhil thesis, University of Oxford, 2022,
§5.6):

- categorical only: steepest-ascent Hamming-1 local search from several starts, every move inside
  the Hamming ball around the trust region's centre;
- mixed: the interleaved search, alternating one categorical neighbour move (continuous values
  fixed) with a few projected gradient steps on the continuous values (categories fixed), inside
  the box, followed by an L-BFGS-B polish of the best point.

Each neighbourhood (all Hamming-1 neighbours of all starts) is scored in ONE batched call to the
acquisition; rows already observed, pending or chosen (a :class:`common.space.configset.ConfigSet`)
are never candidates.

>>> ends, values = local_optima(acqf, space, region, ConfigSet(space, X), rng)
>>> best = best_end(values)  # None: every row the searches met is already taken
"""

from __future__ import annotations

import numpy as np
import torch

from common.acquisition.functions import evaluate, value_and_gradient
from common.log import warn
from common.methods.casmopolitan.trust_region import Region
from common.optim.continuous import maximize_continuous
from common.space.configset import ConfigSet
from common.space.mixed_space import MixedSpace

MAX_NEIGHBOURS = 1024  # Hamming-1 moves scored per row and step (sampled beyond that)


# ---------------------------------------------------------------------- region geometry
def snap_into_region(space: MixedSpace, region: Region, X: np.ndarray) -> np.ndarray:
    """Round rows onto the space's grids, keeping stepped/integer columns inside the box.

    A grid value nearest to a point of the box may lie just outside it; such columns are moved
    halfway towards the centre (itself on the grid) until their rounding falls inside.
    """
    X = np.asarray(X, dtype=float)
    out = space.round(X)
    if not region.cont_dims:
        return out
    cont = np.asarray(region.cont_dims, dtype=int)
    lo, hi, c = region.lower, region.upper, region.centre[cont]
    work = np.clip(X[:, cont], lo, hi)
    for _ in range(30):
        V = out[:, cont]
        bad = (V < lo - 1e-9) | (V > hi + 1e-9)
        if not bad.any():
            break
        work = np.where(bad, (work + c) / 2.0, work)
        trial = out.copy()
        trial[:, cont] = work
        out[:, cont] = np.where(bad, space.round(trial)[:, cont], V)
    else:
        V = out[:, cont]
        bad = (V < lo - 1e-9) | (V > hi + 1e-9)
        out[:, cont] = np.where(bad, c, V)
    return out


def sample_in_region(
    space: MixedSpace, region: Region, n: int, rng: np.random.Generator
) -> np.ndarray:
    """``n`` random rows of the region: a uniform radius in ``0..hamming`` of random categorical
    changes, and uniform continuous values in the box, snapped to the grids."""
    X = np.repeat(region.centre[None], n, axis=0)
    cat = np.asarray(region.cat_dims, dtype=int)
    if cat.size and region.hamming > 0:
        n_choices = np.asarray(space.n_choices)
        radius = rng.integers(0, region.hamming + 1, size=n)
        ranks = np.argsort(rng.random((n, cat.size)), axis=1).argsort(axis=1)
        change = (ranks < radius[:, None]) & (n_choices[None] > 1)
        offsets = rng.integers(1, np.maximum(n_choices, 2)[None].repeat(n, 0))
        H = X[:, cat].astype(int)
        X[:, cat] = np.where(change, (H + offsets) % n_choices, H)
    if region.cont_dims:
        cont = np.asarray(region.cont_dims, dtype=int)
        X[:, cont] = region.lower + rng.random((n, cont.size)) * (region.upper - region.lower)
    return snap_into_region(space, region, X)


def hamming_neighbours(
    X: np.ndarray, space: MixedSpace, rng: np.random.Generator, max_neighbours: int
) -> np.ndarray:
    """All Hamming-1 neighbours of every row, ``(n_rows, n_moves, dim)`` (a random subset of the
    moves, the same for every row, when there are more than ``max_neighbours``)."""
    pairs = zip(space.cat_dims, space.n_choices, strict=True)
    dims = np.concatenate([np.full(k - 1, j) for j, k in pairs])
    offsets = np.concatenate([np.arange(1, k) for k in space.n_choices])
    n_choices = np.concatenate([np.full(k - 1, k) for k in space.n_choices])
    if len(dims) > max_neighbours:
        keep = rng.choice(len(dims), size=max_neighbours, replace=False)
        dims, offsets, n_choices = dims[keep], offsets[keep], n_choices[keep]
    N = np.repeat(X[:, None, :], len(dims), axis=1)
    moves = np.arange(len(dims))
    N[:, moves, dims] = (N[:, moves, dims] + offsets) % n_choices
    return N


# ---------------------------------------------------------------------- moves
def _score(acqf, X: np.ndarray) -> np.ndarray:
    if len(X) == 0:
        return np.empty(0)
    values = evaluate(acqf, X).reshape(-1)
    return np.where(np.isfinite(values), values, -np.inf)


def highest(values: np.ndarray, rng: np.random.Generator) -> int:
    """The index of a highest of ``values``, exact ties broken at random.

    A nominal model cannot tell apart categories it has observed nowhere (an overlap kernel gives
    every such value of a categorical the same posterior), and ``np.argmax`` would take the first
    one listed: the order of a categorical's choices would decide, information the model does not
    have (on Ackley-5C, whose categories are a discretised axis, the next label is a step towards
    the optimum from one side of it; on the same problem with its categories relabelled it is a
    random step)."""
    ties = np.flatnonzero(values == values.max())
    return int(ties[0] if len(ties) == 1 else ties[rng.integers(len(ties))])


def _tolerance(vals: np.ndarray) -> np.ndarray:
    """The least gain that counts as a move (stops the search creeping by rounding errors)."""
    return np.where(np.isfinite(vals), 1e-4 * np.maximum(np.abs(vals), 1.0), 0.0)


def _categorical_move(acqf, space, region, X, vals, taken, rng, max_neighbours):
    """One steepest-ascent Hamming-1 move of every row (one batched acquisition call)."""
    N = hamming_neighbours(X, space, rng, max_neighbours)
    flat = N.reshape(-1, X.shape[1])
    ok = region.contains(flat) & ~taken.contains(flat)
    scores = np.full(len(flat), -np.inf)
    scores[ok] = _score(acqf, flat[ok])
    scores = scores.reshape(N.shape[:2])
    j = np.array([highest(row, rng) for row in scores], dtype=int)
    best = scores[np.arange(len(X)), j]
    moved = best > vals + _tolerance(vals)
    X[moved] = N[moved, j[moved]]
    vals[moved] = best[moved]
    return moved


def _continuous_move(acqf, space, region, X, vals, taken, steps: int, lr: float):
    """A few Adam steps (ascent) on the continuous values of every row, in box coordinates,
    projected onto the box; a row moves if its snapped result scores higher."""
    cont = list(region.cont_dims)
    width = region.upper - region.lower
    safe = np.where(width > 0, width, 1.0)
    u0 = np.clip((X[:, cont] - region.lower) / safe, 0.0, 1.0)
    u, m, v = u0.copy(), np.zeros_like(u0), np.zeros_like(u0)
    Xt = X.copy()
    for t in range(1, steps + 1):  # Adam (β = 0.9, 0.999) by hand, gradients in numpy
        Xt[:, cont] = region.lower + u * width
        values, grad = value_and_gradient(acqf, Xt, cont)
        if not np.isfinite(values).all():
            break
        grad = grad * width  # in box coordinates
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        # torch's square root (its last bit differs from numpy's): the steps taken before
        root = torch.from_numpy(v / (1 - 0.999**t)).sqrt().numpy()
        step = lr * (m / (1 - 0.9**t)) / (root + 1e-8)
        u = np.clip(u + step, 0.0, 1.0)
    u1 = np.where(np.isfinite(u), u, u0)
    X_new = X.copy()
    X_new[:, cont] = region.lower + u1 * width
    X_new = snap_into_region(space, region, X_new)
    new_vals = _score(acqf, X_new)
    new_vals[taken.contains(X_new)] = -np.inf
    moved = new_vals > vals + _tolerance(vals)
    X[moved] = X_new[moved]
    vals[moved] = new_vals[moved]
    return moved


def _polish(acqf, space, region, x, value, taken, rng):
    """L-BFGS-B on the continuous values of ``x`` inside the box, categories fixed."""
    x_new, _ = maximize_continuous(
        acqf,
        x,
        region.cont_dims,
        rng,
        lower=region.lower,
        upper=region.upper,
        n_raw=64,
        n_starts=2,
        extra_starts=x[list(region.cont_dims)][None],
    )
    x_new = snap_into_region(space, region, x_new[None])
    if taken.contains(x_new)[0]:
        return x, value
    new_value = float(_score(acqf, x_new)[0])
    return (x_new[0], new_value) if new_value > value else (x, value)


# ---------------------------------------------------------------------- the optimiser
def local_optima(
    acqf,
    space: MixedSpace,
    region: Region,
    taken: ConfigSet,
    rng: np.random.Generator,
    *,
    n_starts: int = 3,
    n_raw: int = 256,
    max_rounds: int = 30,
    grad_steps: int = 5,
    lr: float = 0.1,
    max_neighbours: int = MAX_NEIGHBOURS,
) -> tuple[np.ndarray, np.ndarray]:
    """Where CASMOPOLITAN's local search ends from each start, and the acquisition there.

    Starts: the centre and the best ``n_starts − 1`` of ``n_raw`` random rows of the region (one
    batched call). Then rounds of categorical moves (Hamming-1, steepest ascent) and, on mixed
    spaces, continuous moves, until no start improves or ``max_rounds``; finally the best row's
    continuous values are polished by L-BFGS-B. A row's value is ``-inf`` where every row its
    search met is already in ``taken`` (a tiny, exhausted region).
    """
    has_cat = bool(region.cat_dims) and region.hamming > 0
    has_cont = bool(region.cont_dims)
    raw = sample_in_region(space, region, n_raw, rng)
    raw = raw[~taken.contains(raw)]
    raw_vals = _score(acqf, raw)
    top = np.argsort(-raw_vals)[: max(n_starts - 1, 0)]
    X = np.vstack([region.centre[None], raw[top]])
    vals = np.concatenate([[-np.inf], raw_vals[top]])
    if not taken.contains(region.centre[None])[0]:
        vals[0] = float(_score(acqf, region.centre[None])[0])
    for _ in range(max_rounds):
        moved = np.zeros(len(X), dtype=bool)
        if has_cat:
            moved |= _categorical_move(acqf, space, region, X, vals, taken, rng, max_neighbours)
        if has_cont:
            moved |= _continuous_move(acqf, space, region, X, vals, taken, grad_steps, lr)
        if not moved.any():
            break
    best = int(np.argmax(vals))
    if has_cont and np.isfinite(vals[best]):
        try:
            x, value = _polish(acqf, space, region, X[best].copy(), vals[best], taken, rng)
            X[best], vals[best] = x, value
        except Exception as err:  # the unpolished point is still a good one
            warn(f"Continuous polish failed ({err}); using the local-search point.", cause="polish")
    return X, vals


def best_end(values: np.ndarray) -> int | None:
    """The index of the highest of :func:`local_optima`'s values, ``None`` if none is finite."""
    best = int(np.argmax(values))
    return best if np.isfinite(values[best]) else None
