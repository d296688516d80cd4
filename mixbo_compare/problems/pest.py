"""Pest Control (COMBO, Oh et al. 2019), deterministic variant of CASMOPOLITAN and MCBO.

25 stages, each choosing no action (0) or one of four pesticides (1..4). The cost of a schedule is
the money paid for pesticides plus, at every stage, the fraction of 100 simulated sites whose pest
fraction exceeds the threshold 0.1. Every random draw uses a fresh ``RandomState(seed)``, so the
objective is deterministic: the initial fractions, one spread-rate vector shared by all stages, and
a control-rate vector for the k-th use of pesticide p drawn with Beta(1, beta_p + k tol_p / 25).
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
# Index 0 is "no action"; entries 1..4 are the pesticides.
_PRICE = np.array([0.0, 1.0, 0.8, 0.7, 0.5])
_MAX_DISCOUNT = np.array([0.0, 0.2, 0.3, 0.3, 0.0])
_TOLERANCE = np.array([0.0, 1.0 / 7.0, 2.5 / 7.0, 2.0 / 7.0, 0.5 / 7.0])
_CONTROL_BETA = np.array([0.0, 2.0 / 7.0, 3.0 / 7.0, 3.0 / 7.0, 5.0 / 7.0])

# Best-known values (simulated annealing + neighbourhood polish; not proven optimal), both
# reached at pesticide 3 for 24 stages then no action.
BEST_KNOWN: dict[int, float] = {0: 12.0316, 8733: 11.9916}


def _beta(seed: int, b: float, size: int | tuple[int, ...] = N_SIMULATIONS) -> np.ndarray:
    """One Beta(1, b) draw of ``size`` from a fresh ``RandomState(seed)``."""
    return np.random.RandomState(seed).beta(1.0, b, size=size)


class PestControl:
    """The deterministic Pest Control objective for one seed, vectorised over schedules."""

    def __init__(self, seed: int = 0, n_stages: int = N_STAGES):
        self.seed = seed
        self.n_stages = n_stages
        self.init_frac = _beta(seed, 30.0)
        self.spread = _beta(seed, 17.0 / 3.0)
        # control[p, k]: control rates at the k-th use of pesticide p (row 0 unused).
        self.control = np.zeros((5, n_stages, N_SIMULATIONS))
        for p in range(1, 5):
            b = float(_CONTROL_BETA[p])
            for k in range(n_stages):
                self.control[p, k] = _beta(seed, b)
                b += float(_TOLERANCE[p]) / n_stages  # tolerance grows by repeated addition

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Cost of each row of ``x`` (shape ``(n, n_stages)``, values in 0..4)."""
        x = np.asarray(x, dtype=int).reshape(-1, self.n_stages)
        n = len(x)
        rows = np.arange(n)
        uses_total = np.stack([np.sum(x == p, axis=1) for p in range(5)], axis=1)  # (n, 5)
        uses_so_far = np.zeros((n, 5), dtype=int)
        cur = np.broadcast_to(self.init_frac, (n, N_SIMULATIONS))
        paid = np.zeros(n)
        penalty = np.zeros(n)
        for i in range(self.n_stages):
            p = x[:, i]
            act = p > 0
            penalty += np.mean(cur > THRESHOLD, axis=1)
            rate = self.control[p, uses_so_far[rows, p]]
            controlled = (1.0 - rate) * cur
            spread = self.spread * (1.0 - cur) + cur
            discount = _MAX_DISCOUNT[p] / self.n_stages * uses_total[rows, p]
            paid += np.where(act, _PRICE[p] * (1.0 - discount), 0.0)
            uses_so_far[rows, p] += act
            cur = np.where(act[:, None], controlled, spread)
        return paid + penalty


def pest_control(seed: int = 0) -> Problem:
    """Pest Control (COMBO), deterministic: x1..x25 ∈ {0..4}, to minimise.

    ``optimum`` is the best-known value for seeds 0 (12.0316) and 8733 (11.9916) — not a proven
    optimum — and ``None`` for other seeds.
    """
    model = PestControl(seed)
    names = [f"x{i}" for i in range(1, N_STAGES + 1)]
    space = MixedSpace([Categorical(name, (0, 1, 2, 3, 4)) for name in names])

    def function(config: Mapping[str, Any]) -> float:
        return float(model.evaluate(np.array([[int(config[name]) for name in names]]))[0])

    name = "pest" if seed == 0 else f"pest_seed{seed}"
    return Problem(name, space, function, BEST_KNOWN.get(seed))
