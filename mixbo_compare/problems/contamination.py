"""Contamination control (BOCS, Baptista & Poloczek 2018; setup of COMBO, Oh et al. 2019).

25 binary stages: at each stage a food-processing line is either cleaned (x_i = 1, cost 1) or not.
Over 100 simulations the contamination fraction evolves as

    Z_i = lambda_i (1 - x_i)(1 - Z_{i-1}) + (1 - gamma_i x_i) Z_{i-1},

and the objective is sum(x) - rho * sum_i [mean_k 1{Z_ik < U} - (1 - eps)] + lambda_reg * sum(x)
with U = 0.1, eps = 0.05, rho = 1. Z_0, lambda and gamma come from three fresh
``RandomState(seed)`` streams (Beta(1, 30), Beta(1, 17/3) and Beta(1, 3/7)), as in COMBO.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from common.space.mixed_space import Categorical, MixedSpace
from mixbo_compare.problems.problem import Problem

N_STAGES = 25
N_SIMULATIONS = 100
THRESHOLD = 0.1
EPSILON = 0.05
RHO = 1.0

# Best-known values for lambda_reg = 0 (tabu search, 30 restarts; not proven optimal).
BEST_KNOWN: dict[int, float] = {6031: 21.44, 1203: 21.18, 758: 21.35, 2539: 21.19, 7596: 21.02}


class Contamination:
    """The contamination-control objective for one seed, vectorised over binary schedules."""

    def __init__(self, seed: int = 6031, lambda_reg: float = 0.0, n_stages: int = N_STAGES):
        self.seed = seed
        self.lambda_reg = lambda_reg
        self.n_stages = n_stages
        shape = (n_stages, N_SIMULATIONS)
        self.init_z = np.random.RandomState(seed).beta(1.0, 30.0, size=N_SIMULATIONS)
        self.spread = np.random.RandomState(seed).beta(1.0, 17.0 / 3.0, size=shape)
        self.restore = np.random.RandomState(seed).beta(1.0, 3.0 / 7.0, size=shape)

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Objective of each row of ``x`` (shape ``(n, n_stages)``, values 0 or 1)."""
        x = np.asarray(x, dtype=float).reshape(-1, self.n_stages)
        z = np.broadcast_to(self.init_z, (len(x), N_SIMULATIONS))
        safe_fraction = np.zeros(len(x))
        for i in range(self.n_stages):
            xi = x[:, i : i + 1]
            z = self.spread[i] * (1.0 - xi) * (1.0 - z) + (1.0 - self.restore[i] * xi) * z
            safe_fraction += np.mean(z < THRESHOLD, axis=1)
        violation = safe_fraction - self.n_stages * (1.0 - EPSILON)
        n_cleaned = x.sum(axis=1)
        return n_cleaned - RHO * violation + self.lambda_reg * n_cleaned


def contamination(seed: int = 6031, lambda_reg: float = 0.0) -> Problem:
    """Contamination control (BOCS/COMBO): x1..x25 ∈ {0, 1}, to minimise.

    ``optimum`` is the best-known value (not proven) for COMBO's case seeds with
    ``lambda_reg = 0`` (6031: 21.44, 1203: 21.18, 758: 21.35, 2539: 21.19, 7596: 21.02), else
    ``None``.
    """
    model = Contamination(seed, lambda_reg)
    names = [f"x{i}" for i in range(1, N_STAGES + 1)]
    space = MixedSpace([Categorical(name, (0, 1)) for name in names])

    def function(config: Mapping[str, Any]) -> float:
        return float(model.evaluate(np.array([[int(config[name]) for name in names]]))[0])

    name = "contamination"
    if seed != 6031:
        name += f"_seed{seed}"
    if lambda_reg:
        name += f"_lambda{lambda_reg:g}"
    optimum = BEST_KNOWN.get(seed) if lambda_reg == 0 else None
    return Problem(name, space, function, optimum)
