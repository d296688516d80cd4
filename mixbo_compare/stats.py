"""Small statistics shared by the single- and multi-objective reports: median and quartiles,
ranks across samplers, number formatting."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np


def median_iqr(x: Iterable[float]) -> tuple[float, float, float]:
    """Median, first and third quartile of the finite entries (NaNs when there are none)."""
    a = np.asarray([v for v in x if math.isfinite(v)], dtype=float)
    if not len(a):
        return math.nan, math.nan, math.nan
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return float(med), float(q1), float(q3)


def ranks(finals: dict[str, dict[int, float]]) -> dict[str, list[float]]:
    """Per seed, the rank of each sampler's final regret among the samplers with a value there.

    ``finals[sampler][seed]`` is a final regret (NaN or missing: the sampler has no rank on that
    seed). Ties share the average rank; rank 1 is the lowest regret (pass a negated hypervolume
    to rank the highest first).
    """
    from scipy.stats import rankdata

    out: dict[str, list[float]] = {s: [] for s in finals}
    seeds = sorted({seed for by_seed in finals.values() for seed in by_seed})
    for seed in seeds:
        present = [
            (s, by_seed[seed])
            for s, by_seed in finals.items()
            if seed in by_seed and math.isfinite(by_seed[seed])
        ]
        if not present:
            continue
        for (s, _), r in zip(present, rankdata([v for _, v in present]), strict=True):
            out[s].append(float(r))
    return out


def ordered(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def fmt(x: float, digits: int = 3) -> str:
    if not math.isfinite(x):
        return "–"
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def mean(xs: Iterable[float]) -> float:
    a = [x for x in xs if math.isfinite(x)]
    return float(np.mean(a)) if a else math.nan
