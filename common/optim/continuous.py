"""The continuous maximiser: L-BFGS-B on an acquisition's continuous columns, others fixed.

:func:`ascend` runs many starts as one problem (the sum of their acquisitions);
:func:`maximize_continuous` picks the starts and returns the best free row (CoCaBO's choice of the
continuous values once its bandits fixed the categories).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from botorch.acquisition import (
    AcquisitionFunction,
)

from common.acquisition.functions import evaluate, value_and_gradient

FAILED_ASCENT = 1e300  # the loss where an acquisition is not finite: the line search backs off


def ascend(
    acqf: AcquisitionFunction,
    starts: np.ndarray,
    cols: Sequence[int] | np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    maxiter: int,
) -> tuple[np.ndarray, np.ndarray]:
    """At most ``maxiter`` L-BFGS-B iterations on columns ``cols`` of every row of ``starts``
    within ``[lower, upper]`` (per column of ``cols``), each row's other columns fixed; returns
    the rows and their acquisition values.

    The rows are independent problems solved as one: the sum of their acquisitions has each row's
    own gradient in that row's variables, so one scipy run moves them all with one batched
    acquisition call per evaluation (BoTorch's ``gen_candidates_scipy`` runs one L-BFGS-B per row
    in lockstep, but limits BLAS threads on every call through threadpoolctl, whose library scan
    costs about 1 ms a call, a fifth of one of BO-FM's short ascents).
    """
    from scipy.optimize import minimize

    starts = np.asarray(starts, dtype=float)
    cols = np.asarray(cols, dtype=int)
    n, k = len(starts), len(cols)
    X = starts.copy()

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        X[:, cols] = flat.reshape(n, k)
        values, grad = value_and_gradient(acqf, X, cols)
        total = float(torch.from_numpy(values).sum())  # torch's sum, as before the numpy pass
        if not np.isfinite(total):
            return FAILED_ASCENT, np.zeros_like(flat)
        return -total, -grad.reshape(-1)

    x0 = np.clip(starts[:, cols], lower, upper).reshape(-1)
    bounds = list(zip(np.tile(lower, n), np.tile(upper, n), strict=True))
    result = minimize(
        loss, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": maxiter}
    )
    rows = starts.copy()
    rows[:, cols] = np.clip(result.x.reshape(n, k), lower, upper)
    return rows, evaluate(acqf, rows)


def maximize_continuous(
    acqf: AcquisitionFunction,
    template: np.ndarray,
    cont_dims: Sequence[int],
    rng: np.random.Generator,
    *,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    n_raw: int = 512,
    n_starts: int = 4,
    extra_starts: np.ndarray | None = None,
    snap: Callable[[np.ndarray], np.ndarray] | None = None,
    exclude: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, float]:
    """Maximise ``acqf`` over ``cont_dims`` in ``[lower, upper]``, other columns as ``template``.

    Multi-start gradient optimisation: ``n_raw`` uniform candidates (plus ``extra_starts``, rows of
    continuous values) are scored in one batch, and the best ``n_starts`` are refined together by
    L-BFGS-B (:func:`ascend`). ``snap`` (e.g. :meth:`MixedSpace.round`) puts rows on the space's
    grid (integers, steps): the refined rows are snapped and scored again, so the value returned is
    that of the configuration that will run, not of its continuous relaxation. ``exclude`` (e.g.
    :meth:`common.space.configset.ConfigSet.contains`) marks rows that must not be returned, such as
    configurations already observed: the best refined or raw row it does not mark is returned
    (with integers, the optimum often snaps onto an observed row). Returns the best full row and
    its acquisition value (the best row overall if ``exclude`` marks every one).
    """
    cont = np.asarray(cont_dims, dtype=int)
    template = np.asarray(template, dtype=float)
    if cont.size == 0:
        return template.copy(), float(evaluate(acqf, template[None])[0])
    lo = np.zeros(cont.size) if lower is None else np.asarray(lower, dtype=float)
    hi = np.ones(cont.size) if upper is None else np.asarray(upper, dtype=float)
    raw = lo + rng.random((n_raw, cont.size)) * (hi - lo)
    if extra_starts is not None and len(extra_starts):
        raw = np.vstack([np.clip(np.asarray(extra_starts, dtype=float), lo, hi), raw])
    X = np.repeat(template[None], len(raw), axis=0)
    X[:, cont] = raw
    if snap is not None:
        X = snap(X)
    scores = evaluate(acqf, X)
    starts = X[np.argsort(-scores)[:n_starts]]
    try:
        cands_np, vals_np = ascend(acqf, starts, cont, lo, hi, maxiter=100)
    except Exception:  # the raw scores still give a sensible point
        cands_np, vals_np = starts, np.sort(scores)[::-1][: len(starts)]
    if snap is not None:
        cands_np = snap(cands_np)
        vals_np = evaluate(acqf, cands_np)
    rows, values = np.vstack([cands_np, X]), np.concatenate([vals_np, scores])
    if exclude is not None:
        allowed = ~np.asarray(exclude(rows), dtype=bool)
        if allowed.any():
            values = np.where(allowed, values, -np.inf)
    best = int(np.argmax(values))  # refined rows first: a tie keeps the refined one
    return rows[best], float(values[best])
