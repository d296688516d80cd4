"""Low-autocorrelation binary sequences (LABS): a hard binary problem with a known optimum.

A sequence ``s_0..s_{N-1}`` of ±1 has aperiodic autocorrelations ``C_k = Σ_i s_i s_{i+k}`` and
energy ``E = Σ_{k=1}^{N-1} C_k²`` (Golay 1977; Bernasconi 1987); minimising E is a classic hard
combinatorial benchmark whose optima are known by exhaustive search (Packebusch and Mertens,
"Low autocorrelation binary sequences", J. Phys. A 2016). The objective here is ``E / N²``, so that
values are comparable across lengths.

``optimum`` is the proven minimal energy over ``N²`` for every length up to 60:
Packebusch and Mertens's table (branch and bound, N ≤ 66; OEIS A102780). For N ≤ 35 each value
was also found here by exhaustive enumeration of every sequence (a C program, itself checked
against numpy's brute force up to N = 16), and all of them agree; the tests re-enumerate N = 10,
12 and 14.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, MixedSpace
from mixbo_compare.problems.problem import Problem

MIN_LENGTH, MAX_LENGTH = 10, 60

# N -> minimal energy E (Packebusch and Mertens 2016); N <= ENUMERATED also enumerated here
OPTIMAL_ENERGIES: dict[int, int] = {
    2: 1, 3: 1, 4: 2, 5: 2, 6: 7, 7: 3, 8: 8, 9: 12, 10: 13,
    11: 5, 12: 10, 13: 6, 14: 19, 15: 15, 16: 24, 17: 32, 18: 25, 19: 29, 20: 26,
    21: 26, 22: 39, 23: 47, 24: 36, 25: 36, 26: 45, 27: 37, 28: 50, 29: 62, 30: 59,
    31: 67, 32: 64, 33: 64, 34: 65, 35: 73, 36: 82, 37: 86, 38: 87, 39: 99, 40: 108,
    41: 108, 42: 101, 43: 109, 44: 122, 45: 118, 46: 131, 47: 135, 48: 140, 49: 136, 50: 153,
    51: 153, 52: 166, 53: 170, 54: 175, 55: 171, 56: 192, 57: 188, 58: 197, 59: 205, 60: 218,
}  # fmt: skip
ENUMERATED = 35


def energy(s: np.ndarray) -> np.ndarray:
    """Energy ``Σ_k C_k²`` of each row of ``s`` (shape ``(n, N)``, values ±1)."""
    s = np.asarray(s, dtype=np.int64)
    s = s.reshape(-1, s.shape[-1])
    n = s.shape[1]
    # C_k for k = 1..N-1 as one correlation: the full autocorrelation's upper half
    corr = np.stack([np.correlate(row, row, mode="full")[n:] for row in s])
    return (corr**2).sum(axis=1)


def labs(length: int) -> Problem:
    """LABS of ``length`` N: parameters ``s0..s{N-1}`` ∈ {-1, 1}, minimise ``E / N²``."""
    if length < 2:
        raise ValueError(f"labs: the sequence needs at least 2 elements, got {length}.")
    names = [f"s{i}" for i in range(length)]
    space = MixedSpace([Categorical(name, (-1, 1)) for name in names])

    def function(config: Mapping[str, Any]) -> float:
        return float(energy(np.array([[int(config[name]) for name in names]]))[0]) / length**2

    known = OPTIMAL_ENERGIES.get(length)
    optimum = None if known is None else known / length**2
    return Problem(f"labs-n{length}", space, function, optimum)
