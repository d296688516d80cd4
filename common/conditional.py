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

Which parameters a branch uses is found from the completed trials, not declared: parameters that
appear in exactly the same trials form a group (as TPE's ``group=True``); a group's *parent* is a
categorical or integer parameter present whenever the group is whose values in the trials with the
group never occur in the trials without it. The group is then active exactly when the parent is
active and takes one of those values (an interval for an integer parent when the values separate
by a threshold, as ``n_layers >= 2``). A group without such a parent (its presence depends on a
float, or on chance) is treated as always active, with the imputed value where a trial lacks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from common.space import MixedSpace


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


def infer_conditions(
    space: MixedSpace, configs: Sequence[Mapping[str, Any]]
) -> tuple[Condition, ...]:
    """The conditions of ``space``'s modelled parameters that some of ``configs`` lack.

    Ordered parents first, so that a parent's own activity is known when its children's is.
    """
    from common.space import Categorical, Integer

    names = [p.name for p in space.modelled]
    presence = {n: frozenset(i for i, c in enumerate(configs) if n in c) for n in names}
    everywhere = frozenset(range(len(configs)))
    groups: dict[frozenset[int], list[str]] = {}
    for name in names:
        if presence[name] != everywhere:
            groups.setdefault(presence[name], []).append(name)
    by_name = {p.name: p for p in space.modelled}
    conditions = []
    # larger groups first: a parent is present in strictly more trials than its children
    for trials, members in sorted(groups.items(), key=lambda kv: (-len(kv[0]), sorted(kv[1]))):
        best: Condition | None = None
        best_size = None
        for name in sorted(names):
            p = by_name[name]
            if name in members or not isinstance(p, (Categorical, Integer)):
                continue
            if not trials < presence[name]:
                continue
            inside = {_value(p, configs[i][name]) for i in trials}
            outside = {_value(p, configs[i][name]) for i in presence[name] - trials}
            if inside & outside:
                continue
            size = len(presence[name])
            if best_size is not None and size >= best_size:
                continue  # the most specific parent wins (the fewest trials)
            best_size = size
            interval = None if isinstance(p, Categorical) else _interval(p, inside, outside)
            allowed = () if interval is not None else tuple(sorted(inside))
            best = Condition(tuple(sorted(members)), name, allowed, interval)
        conditions.append(best or Condition(tuple(sorted(members))))
    return tuple(conditions)


def _value(p: Any, value: Any) -> Any:
    from common.space import Categorical

    return p.index(value) if isinstance(p, Categorical) else int(value)


def _interval(p: Any, inside: set[int], outside: set[int]) -> tuple[float, float] | None:
    """The threshold range of an integer parent's allowed values, or ``None`` (a value set)."""
    if max(outside) < min(inside):
        return float(max(outside) + 1), float(p.high)
    if max(inside) < min(outside):
        return float(p.low), float(min(outside) - 1)
    return None


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


def conditioned(space: MixedSpace, configs: Sequence[Mapping[str, Any]]) -> MixedSpace:
    """``space`` under the conditions ``configs`` show (itself if every config has every
    modelled parameter, or if it declares its conditions, as a Ray Tune space does)."""
    if space.conditions:
        return space
    names = [p.name for p in space.modelled]
    if all(name in config for config in configs for name in names):
        return space
    return space.with_conditions(infer_conditions(space, configs))
