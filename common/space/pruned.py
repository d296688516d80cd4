"""Pruned trials as observations: a value imputed from what a trial reported before it stopped.

A trial pruned (Optuna) or stopped early by a scheduler (Ray Tune's ASHA, HyperBand, median
stopping) never reports a final value, but its learning curve says much about it: the pruner
stopped it because it looked worse than the others at the same step. Each pruned trial gets a
value on the completed trials' final scale, so that the methods model it like any other
observation (their GPs fit warped targets, ranks and magnitudes):

- ``"quantile"`` (the default): quantile matching along the curves. A trial pruned at step ``s``
  with value ``v`` takes the final value that the completed trials reach at the quantile ``v``
  has among their values at ``s`` (beyond their range, extrapolated linearly); the step is the
  latest one the trial and at least two completed trials reported. Where no such step exists,
  ``"rank"`` places it.
- ``"rank"``: as Optuna's TPESampler orders them (Akiba et al., "Optuna: a next-generation
  hyperparameter optimization framework", KDD 2019): a pruned trial is worse than every completed
  trial, and among the pruned ones a trial that went further is better, then the one with the
  better last value.
  The values are spread over one range of the completed values above the worst of them.
- ``"last"``: the last reported value as is (an optimistic bound on the final value).
- ``"ignore"``: not modelled (they still count as issued and as taken configurations).

Values here are minimised: the engine flips a maximised objective's values and curves first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

Curve = Mapping[int, float]  # step -> reported (intermediate) value

IMPUTATIONS = ("quantile", "rank", "last", "ignore")
DEFAULT_IMPUTATION = "quantile"
MIN_PRUNED_TO_START = 2  # pruned trials with values that start the model without a completed one


def check_imputation(method: str) -> str:
    if method not in IMPUTATIONS:
        raise ValueError(f"pruned must be one of {', '.join(IMPUTATIONS)}, got {method!r}.")
    return method


def finite_curve(curve: Curve | None) -> dict[int, float]:
    """The finite points of ``curve``, by step."""
    return {
        int(s): float(v)
        for s, v in (curve or {}).items()
        if v is not None and math.isfinite(float(v))
    }


def impute(
    values: Sequence[float | None],
    curves: Sequence[Curve | None],
    pruned: Sequence[bool],
    method: str = DEFAULT_IMPUTATION,
) -> list[float | None]:
    """``values`` with each pruned trial's value imputed by ``method`` (see the module).

    ``values`` are the completed trials' final values (``None`` or NaN: no value; a pruned
    trial's entry is ignored), ``curves`` each trial's reported values by step, ``pruned`` which
    trials were stopped early. A pruned trial that reported no finite value is left out (the
    adapters still count it as issued and as a taken configuration).
    """
    check_imputation(method)
    out: list[float | None] = [None if p else v for v, p in zip(values, pruned, strict=True)]
    trimmed = [finite_curve(c) for c in curves]
    rows = [i for i, p in enumerate(pruned) if p and trimmed[i]]
    if not rows or method == "ignore":
        return out
    if method == "last":
        for i in rows:
            out[i] = trimmed[i][max(trimmed[i])]
        return out
    done = [
        i
        for i, (v, p) in enumerate(zip(values, pruned, strict=True))
        if not p and v is not None and math.isfinite(v)
    ]
    finals = np.asarray([values[i] for i in done], dtype=float)
    ranked = rows
    if method == "quantile" and len(done) >= 2:
        ranked = []
        for i in rows:
            value = _matched(trimmed[i], [trimmed[j] for j in done], finals)
            if value is None:
                ranked.append(i)
            else:
                out[i] = value
    for i, value in zip(ranked, _below(finals, [trimmed[i] for i in ranked]), strict=True):
        out[i] = value
    return out


def _below(finals: np.ndarray, curves: Sequence[dict[int, float]]) -> list[float]:
    """Values worse than every completed one, ordered as TPE orders pruned trials: further
    step first, then better last value; one range of the completed values wide."""
    if not curves:
        return []
    worst = float(finals.max()) if len(finals) else 0.0
    spread = float(np.ptp(finals)) if len(finals) > 1 else 0.0
    spread = spread or (abs(worst) or 1.0)
    keys = [(-max(c), c[max(c)]) for c in curves]
    distinct = sorted(set(keys))
    rank = {k: r for r, k in enumerate(distinct)}
    return [worst + spread * (rank[k] + 1) / len(distinct) for k in keys]


def _matched(curve: dict[int, float], done: Sequence[dict[int, float]], finals: np.ndarray):
    """The final value matching ``curve``'s last comparable point by quantile among the completed
    trials' ``done`` curves (``None`` when no step has two completed reports)."""
    for step in sorted(curve, reverse=True):
        at = [(c[step], f) for c, f in zip(done, finals, strict=True) if step in c]
        if len(at) < 2:
            continue
        seen = np.sort(np.asarray([a for a, _ in at]))
        final = np.sort(np.asarray([f for _, f in at]))
        if seen[-1] == seen[0]:
            continue
        v = curve[step]
        slope = (final[-1] - final[0]) / (seen[-1] - seen[0])
        if v > seen[-1]:
            value = final[-1] + slope * (v - seen[-1])
        elif v < seen[0]:
            value = final[0] + slope * (v - seen[0])
        else:
            value = float(np.interp(v, seen, final))
        return max(float(value), float(finals.min()))  # never better than the best completed
    return None


def can_start(n_completed: int, n_pruned_valued: int) -> bool:
    """Whether the history holds something to learn from: a completed trial, or pruned trials
    with reported values enough to rank (``MIN_PRUNED_TO_START``)."""
    return n_completed > 0 or n_pruned_valued >= MIN_PRUNED_TO_START
