"""Low-autocorrelation binary sequences (LABS): a hard binary problem with a known optimum.

A sequence ``s_0..s_{N-1}`` of ±1 has aperiodic autocorrelations ``C_k = Σ_i s_i s_{i+k}`` and
energy ``E = Σ_{k=1}^{N-1} C_k²`` (Golay 1977; Bernasconi 1987); minimising E is a classic hard
combinatorial benchmark whose optima are known by exhaustive search (Packebusch and Mertens,
"Low autocorrelation binary sequences", J. Phys. A 2016). The objective here is ``E / N²``, so that
values are comparable across lengths.

``optimum`` is set only where it was checked by exhaustive enumeration for this module (every
sequence of the length, a branch-free C program cross-checked against numpy up to N = 16): the
energies in ``OPTIMAL_ENERGIES``, which agree with the published table. Longer sequences have
``optimum=None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, MixedSpace
from mixbo_compare.problems.problem import Problem

MIN_LENGTH, MAX_LENGTH = 10, 60

# N -> minimal energy E, each enumerated exhaustively (see the module's docstring)
OPTIMAL_ENERGIES: dict[int, int] = {
    2: 1, 3: 1, 4: 2, 5: 2, 6: 7, 7: 3, 8: 8, 9: 12,
    10: 13, 11: 5, 12: 10, 13: 6, 14: 19, 15: 15, 16: 24, 17: 32, 18: 25, 19: 29, 20: 26,
    21: 26, 22: 39, 23: 47, 24: 36, 25: 36, 26: 45, 27: 37, 28: 50, 29: 62, 30: 59,
}  # fmt: skip


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
