"""CatCMA with Margin (the ``cmaes`` package's ``CatCMAwM``) as a ``mixbo-compare`` peer.

Hamano et al., "CatCMA with Margin: Stochastic Optimization for Continuous, Integer, and
Categorical Variables" (GECCO 2025): a joint Gaussian (continuous and integer variables) and
categorical distribution, updated by CMA-ES/natural gradients, with a margin that keeps every
integer value and category from losing all its probability.

Set-up, and why: the package's defaults (population 4 + ⌊3 ln N⌋, mean at the centre of the box,
default step size, margin on) — the setting its authors benchmark and the one OptunaHub's
``CatCmawmSampler`` uses; with 50–200 evaluations that is 10–30 generations, too few for the
IPOP/BIPOP restarts that pay off at larger budgets, so there are none.

Encoding: continuous floats are ``x_space`` boxes (log-scaled ones as the box of their logarithms,
so the Gaussian searches log-space); integers and stepped floats are ``z_space`` grids of their
values (log-scaled integers as the grid of the logarithms of their values); categoricals, and
integers or stepped floats with only two values (as the package's documentation recommends for
binary variables), are ``c_space`` categories. A parameter with one value is not shown to it.

Asynchronous use: ``tell`` takes a whole generation, so proposals are grouped by generation;
once a generation's members are all asked, further proposals come from the same distribution and
their values are not told (only with simultaneously running trials). A failed member is told the
worst value of its generation.

Constraints (a trial's ``trial.set_constraint`` values, feasible when all are ≤ 0): the package has
no constraint handling of its own, so Deb's feasibility rule is told as values: an infeasible
member gets the worst feasible value seen so far plus its total violation, which ranks it behind
every feasible member of its generation and orders the infeasible ones by how far they are from
feasibility (before any feasible value, by violation alone). Without constraints the values are
the objective's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from optuna.distributions import BaseDistribution, CategoricalDistribution

from mixbo_compare.peers._sampler import PeerSampler, fixed_params, grid, plain, violation

PACKAGE = "cmaes"


class _Codec:
    """Which of CatCMAwM's x / z / c variables each parameter is, and the value maps back."""

    def __init__(self, space: Mapping[str, BaseDistribution]) -> None:
        self.space = dict(space)
        self.fixed = fixed_params(space)
        self.x: list[tuple[str, bool]] = []  # (name, log)
        self.z: list[tuple[str, np.ndarray]] = []  # (name, the values)
        self.c: list[tuple[str, list[Any]]] = []  # (name, the values by category)
        self.x_space: list[list[float]] = []
        self.z_space: list[list[float]] = []
        self.c_space: list[int] = []
        for name, dist in space.items():
            if name in self.fixed:
                continue
            if isinstance(dist, CategoricalDistribution):
                self.c.append((name, list(dist.choices)))
                self.c_space.append(len(dist.choices))
                continue
            values = grid(dist)
            if values is None:
                log = bool(dist.log)
                low, high = (np.log(dist.low), np.log(dist.high)) if log else (dist.low, dist.high)
                self.x.append((name, log))
                self.x_space.append([float(low), float(high)])
            elif len(values) == 2:
                self.c.append((name, [plain(dist, v) for v in values]))
                self.c_space.append(2)
            else:
                self.z.append((name, values))
                warped = np.log(values) if dist.log else values
                self.z_space.append([float(v) for v in warped])

    def decode(self, x: Any, z: Any, c: Any) -> dict[str, Any]:
        params = dict(self.fixed)
        for i, (name, log) in enumerate(self.x):
            params[name] = plain(self.space[name], np.exp(x[i]) if log else x[i])
        for i, (name, values) in enumerate(self.z):
            k = int(np.argmin(np.abs(np.asarray(self.z_space[i]) - z[i])))
            params[name] = plain(self.space[name], values[k])
        for i, (name, choices) in enumerate(self.c):
            params[name] = choices[int(np.argmax(c[i][: len(choices)]))]
        return params


class CatCMAwMDriver:
    """Asks and tells ``cmaes.CatCMAwM`` one generation at a time."""

    def __init__(self, space: Mapping[str, BaseDistribution], seed: int | None, n_trials: int):
        from cmaes import CatCMAwM

        self.codec = _Codec(space)
        self.optimizer = None
        if self.codec.x_space or self.codec.z_space or self.codec.c_space:
            self.optimizer = CatCMAwM(
                x_space=self.codec.x_space or None,
                z_space=self.codec.z_space or None,
                c_space=self.codec.c_space or None,
                seed=seed,
            )
        self.generation = 0
        self.asked = 0  # members of the current generation asked
        self.told: list[tuple[Any, float | None, float]] = []  # (solution, value, violation)
        self.worst_feasible = -math.inf  # over every generation told

    def ask(self) -> tuple[Any, dict[str, Any]]:
        if self.optimizer is None:
            return None, dict(self.codec.fixed)
        solution = self.optimizer.ask()
        member = self.asked < self.optimizer.population_size
        self.asked += member
        token = (self.generation, solution) if member else None
        return token, self.codec.decode(solution.x, solution.z, solution.c)

    def tell(self, token: Any, value: float | None, constraints: Mapping[str, float]) -> None:
        if token is None or token[0] != self.generation:
            return
        self.told.append((token[1], value, violation(constraints)))
        if len(self.told) < self.optimizer.population_size:
            return
        members = [solution for solution, _, _ in self.told]
        self.optimizer.tell(list(zip(members, self._ranked_values(), strict=True)))
        self.generation += 1
        self.asked, self.told = 0, []

    def _ranked_values(self) -> list[float]:
        """The generation's values as CatCMA is told them: Deb's rule for the infeasible
        members, the worst value of the generation for the failed ones."""
        feasible = [v for _, v, c in self.told if v is not None and c == 0]
        self.worst_feasible = max([self.worst_feasible, *feasible])
        base = self.worst_feasible if math.isfinite(self.worst_feasible) else 0.0
        values = [v if v is None or c == 0 else base + c for _, v, c in self.told]
        finite = [v for v in values if v is not None]
        worst = max(finite) if finite else 0.0
        return [worst if v is None else v for v in values]


class CatCMAwMSampler(PeerSampler):
    """CatCMA with Margin (``cmaes.CatCMAwM``) as an Optuna sampler over a fixed search space."""

    make_driver = CatCMAwMDriver
