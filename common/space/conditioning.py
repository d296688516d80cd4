"""Conditioning a space on the trials: which parameters each branch uses, learned from them.

Which parameters a branch uses is found from the completed trials, not declared: parameters that
appear in exactly the same trials form a group (as TPE's ``group=True``); a group's *parent* is a
categorical or integer parameter present whenever the group is whose values in the trials with the
group never occur in the trials without it. The group is then active exactly when the parent is
active and takes one of those values (an interval for an integer parent when the values separate
by a threshold, as ``n_layers >= 2``). A group without such a parent (its presence depends on a
float, or on chance) is treated as always active, with the imputed value where a trial lacks it.
What a condition means for the encoding: :mod:`common.space.conditions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from common.space.conditions import Condition
from common.space.mixed_space import Categorical, Integer, MixedSpace


def infer_conditions(
    space: MixedSpace, configs: Sequence[Mapping[str, Any]]
) -> tuple[Condition, ...]:
    """The conditions of ``space``'s modelled parameters that some of ``configs`` lack.

    Ordered parents first, so that a parent's own activity is known when its children's is.
    """
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
    return p.index(value) if isinstance(p, Categorical) else int(value)


def _interval(p: Any, inside: set[int], outside: set[int]) -> tuple[float, float] | None:
    """The threshold range of an integer parent's allowed values, or ``None`` (a value set)."""
    if max(outside) < min(inside):
        return float(max(outside) + 1), float(p.high)
    if max(inside) < min(outside):
        return float(p.low), float(min(outside) - 1)
    return None


def conditioned(space: MixedSpace, configs: Sequence[Mapping[str, Any]]) -> MixedSpace:
    """``space`` under the conditions ``configs`` show (itself if every config has every
    modelled parameter, or if it declares its conditions, as a Ray Tune space does)."""
    if space.conditions:
        return space
    names = [p.name for p in space.modelled]
    if all(name in config for config in configs for name in names):
        return space
    return space.with_conditions(infer_conditions(space, configs))
