"""Conditional search spaces: which parameters a configuration uses, learned from the trials.

Real objectives ask for some parameters only on some branches (``C`` only when ``clf == "svm"``,
``width_2`` only when ``n_layers >= 2``). The methods model the *union* of every parameter seen in
the study as one flat space in which each configuration's unused (inactive) parameters sit at a
fixed imputed value: 0.5 on a numeric column, the first choice on a categorical one. Two
configurations of the same branch then agree on every parameter neither uses, so the kernel
compares them on what they use; two of different branches differ in the parent that selects the
branch (and in the children one uses and the other does not), so observations of every branch
inform one model. A candidate is *canonicalised* before the model sees it (inactive columns set to
the imputed value, :meth:`MixedSpace.canonical`), so the acquisition is flat along parameters the
candidate does not use and no search effort or trial goes to a repeat that differs only there.

Why imputation in one model rather than one model per branch: the branch parent is one of the
GP's inputs, so shared parameters (a learning rate used by every branch) are learned from all
trials, and each method's machinery (CoCaBO's bandits, CASMOPOLITAN's trust region, BO-FM's graphs)
runs unchanged on the flat encoding. CASMOPOLITAN's Hamming distance then counts a branch switch as
the parent's change plus each categorical child that changes; BO-FM's graph of a child parameter
is used only between configurations that both use it (otherwise both sit on the imputed node).

Which parameters a branch uses is learned from the trials (:mod:`common.space.conditioning`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from common.space.mixed_space import MixedSpace


@dataclass(frozen=True)
class Condition:
    """``params`` are active exactly when ``parent`` is active and its value is allowed.

    ``choices`` are the allowed category indices of a categorical parent or the allowed values
    of an integer one; ``interval``, when set instead, the inclusive range of an integer
    parent's values. ``parent=None``: the group's activity is not
    explained by any parameter, and it is treated as always active.
    """

    params: tuple[str, ...]
    parent: str | None = None
    choices: tuple[int, ...] = ()
    interval: tuple[float, float] | None = None


def active_mask(space: MixedSpace, X: np.ndarray) -> np.ndarray:
    """Which encoded entries of ``X`` (rows of ``space``) are used, by ``space.conditions``."""
    X = np.asarray(X, dtype=float).reshape(-1, space.dim)
    active = np.ones(X.shape, dtype=bool)
    column = {p.name: j for j, p in enumerate(space.modelled)}
    for cond in space.conditions:
        if cond.parent is None:
            continue
        j = column[cond.parent]
        values = space.column_values(X, j)  # category indices or parameter values
        if cond.interval is not None:
            allowed = (values >= cond.interval[0]) & (values <= cond.interval[1])
        else:
            allowed = np.isin(values, cond.choices)
        on = active[:, j] & allowed
        for name in cond.params:
            active[:, column[name]] = on
    return active


def impute_row(space: MixedSpace) -> np.ndarray:
    """The encoded value an inactive parameter takes: 0.5 (numeric) or the first choice."""
    row = np.full(space.dim, 0.5)
    row[list(space.cat_dims)] = 0.0
    return row
