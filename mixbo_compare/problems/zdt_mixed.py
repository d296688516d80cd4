"""Mixed-variable bi-objective problems with a known Pareto front, after ZDT1 (Zitzler, Deb and
Thiele, 2000), written for the comparison.

``mo-zdt-mixed``: a position ``x0`` in [0, 1], two floats ``x1, x2`` in [0, 1], two integers
``k1, k2`` in 0…7 and a categorical ``c`` in {a, b, c, d}. The distance

    g = 1 + mean(((x1 − 0.3)/0.7)², ((x2 − 0.6)/0.6)², ((k1 − 2)/5)², ((k2 − 5)/5)², 1[c ≠ "c"])

is 1 only at x1 = 0.3, x2 = 0.6, k1 = 2, k2 = 5, c = "c" (each term's scale is its largest
distance in the box, so every term lies in [0, 1]), and

    f1 = x0,    f2 = g·(1 − √(x0 / g)),    both minimised.

The Pareto front is ZDT1's, f2 = 1 − √f1 for f1 in [0, 1], reached only with g = 1: one setting
of the categorical and of the integers. (ZDT1 scales the mean by 9, which puts almost every
random configuration beyond the reference point; without that factor 100 trials give
hypervolumes that tell samplers apart rather than 0.) Ideal (0, 0), nadir (1, 1); the front's
normalised hypervolume up to (1.1, 1.1) is 0.1 + 2/3 + 0.1·1.1 = 263/300 exactly (the area
between the front and the reference, plus the strip beyond f1 = 1).

``mo-constrained``: the same objectives with two constraints (feasible when ≤ 0)

    c1 = 0.85 − (f1 + f2)                 (the front's middle, where f1 + f2 < 0.85, is cut off)
    c2 = 1[c = "a"]·(x1 − 0.2)/0.8        (category "a" only with x1 ≤ 0.2)

The feasible front is max(1 − √f1, 0.85 − f1) over f1 in [0, 1]: ZDT1's front where it
satisfies c1 and the line f1 + f2 = 0.85 between (reached with g > 1, since f2 grows with g).
Ideal (0, 0), nadir (1, 1); its hypervolume is integrated on a fine grid (``_constrained_front_hv``,
a trapezoid rule on 200 001 points, accurate to about 1e-8) when the problem is built.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, Float, Integer, MixedSpace
from mixbo_compare.problems.problem import MultiObjectiveProblem

REFERENCE = 1.1
CONSTRAINED_SUM = 0.85
ZDT_HYPERVOLUME = 0.1 + 2.0 / 3.0 + 0.1 * REFERENCE  # 263/300


def _space() -> MixedSpace:
    return MixedSpace(
        [
            Float("x0", 0.0, 1.0),
            Float("x1", 0.0, 1.0),
            Float("x2", 0.0, 1.0),
            Integer("k1", 0, 7),
            Integer("k2", 0, 7),
            Categorical("c", ("a", "b", "c", "d")),
        ]
    )


def distance(config: Mapping[str, Any]) -> float:
    """ZDT's g: 1 on the Pareto-optimal setting of every variable but ``x0``, up to 2."""
    terms = (
        ((config["x1"] - 0.3) / 0.7) ** 2,
        ((config["x2"] - 0.6) / 0.6) ** 2,
        ((config["k1"] - 2) / 5) ** 2,
        ((config["k2"] - 5) / 5) ** 2,
        float(config["c"] != "c"),
    )
    return 1.0 + sum(terms) / len(terms)


def zdt_objectives(config: Mapping[str, Any]) -> list[float]:
    """``(f1, f2)`` of ZDT1 with the mixed distance :func:`distance`."""
    g = distance(config)
    f1 = float(config["x0"])
    return [f1, g * (1.0 - math.sqrt(f1 / g))]


def zdt_constraints(config: Mapping[str, Any]) -> list[float]:
    """``mo-constrained``'s two constraint values (feasible when ≤ 0)."""
    f1, f2 = zdt_objectives(config)
    return [
        CONSTRAINED_SUM - (f1 + f2),
        (config["x1"] - 0.2) / 0.8 if config["c"] == "a" else 0.0,
    ]


def _constrained_front_hv(points: int = 200_001) -> float:
    """Normalised hypervolume of ``mo-constrained``'s front up to (1.1, 1.1), integrated."""
    f1 = np.linspace(0.0, 1.0, points)
    front = np.maximum(1.0 - np.sqrt(f1), CONSTRAINED_SUM - f1)
    return float(np.trapezoid(REFERENCE - front, f1)) + (REFERENCE - 1.0) * REFERENCE


def zdt_mixed() -> MultiObjectiveProblem:
    """``mo-zdt-mixed`` (see the module's docstring)."""
    return MultiObjectiveProblem(
        "mo-zdt-mixed",
        _space(),
        zdt_objectives,
        ideal=(0.0, 0.0),
        nadir=(1.0, 1.0),
        reference=REFERENCE,
        optimal_hypervolume=ZDT_HYPERVOLUME,
    )


def constrained_zdt() -> MultiObjectiveProblem:
    """``mo-constrained`` (see the module's docstring)."""
    return MultiObjectiveProblem(
        "mo-constrained",
        _space(),
        zdt_objectives,
        ideal=(0.0, 0.0),
        nadir=(1.0, 1.0),
        reference=REFERENCE,
        optimal_hypervolume=_constrained_front_hv(),
        constraints=zdt_constraints,
    )
