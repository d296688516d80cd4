"""BO-FM: a GP with the frequency-modulated ModLap kernel and log-EI, maximised type-wise.

Oh, Gavves, Welling. "Mixed variable Bayesian optimization with frequency modulated kernels",
UAI 2021 (seed 004; seed 001 ch. 5 and app. C).

>>> strategy = BOFMOptions().make(BusyPolicy())
>>> configs = strategy.suggest(space, history, 1, np.random.default_rng(0))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from common.busy import BusyPolicy
from common.configset import ConfigSet
from common.history import History
from common.log import warn
from common.space import MixedSpace
from common.strategy import (
    MethodOptions,
    Strategy,
    check_integer,
    encode_pending,
    loaded,
    random_configs,
    refit_or_reuse,
)


@dataclass(frozen=True)
class BOFMOptions(MethodOptions):
    """BO-FM's options.

    Categoricals are complete graphs, integers with at most ``max_path_values`` values (default
    :data:`common.fm_kernel.PATH_GRAPH_MAX_VALUES`) path graphs, larger ones continuous; ``graphs``
    maps a discrete parameter's name to the adjacency matrix of a graph of its values (choice
    indices for a categorical). Log-EI is maximised by alternating graph hill climbing and
    L-BFGS-B from ``n_starts`` starts: the best of ``n_raw`` random rows and of ``n_spray``
    perturbations of the best observed rows.
    """

    graphs: Mapping[str, Any] = field(default_factory=dict)
    max_path_values: int | None = None
    n_raw: int = 512
    n_spray: int = 128
    n_starts: int = 10

    def __post_init__(self) -> None:
        if not isinstance(self.graphs, Mapping):
            raise ValueError(
                f"graphs must map parameter names to adjacency matrices, got {self.graphs!r}."
            )
        object.__setattr__(self, "graphs", dict(self.graphs))
        if self.max_path_values is not None:
            check_integer("max_path_values", self.max_path_values, 2)
        check_integer("n_raw", self.n_raw, 1)
        check_integer("n_spray", self.n_spray, 0)
        check_integer("n_starts", self.n_starts, 1)

    def make(self, busy: BusyPolicy) -> BOFM:
        return BOFM(self, busy)


class BOFM(Strategy):
    """BO-FM with the ModLap kernel, MAP-fitted with restarts, and log-EI maximised type-wise.

    Busy points (pending configurations and a batch's earlier picks) are handled as ``busy`` says:
    PLAyBOOK's penalisation by default (:mod:`common.penalization`), with distances in graph hops
    on the discrete columns (:func:`busy_point_geometry`).
    """

    def __init__(
        self, options: BOFMOptions = BOFMOptions(), busy: BusyPolicy = BusyPolicy()
    ) -> None:
        super().__init__(busy)
        from common.fm_kernel import PATH_GRAPH_MAX_VALUES

        self.options = options
        self.graphs = options.graphs
        self.max_path_values = (
            PATH_GRAPH_MAX_VALUES if options.max_path_values is None else options.max_path_values
        )
        self.n_raw = options.n_raw
        self.n_spray = options.n_spray
        self.n_starts = options.n_starts

    def _model(
        self,
        key: Any,
        layout,
        Z: np.ndarray,
        values: np.ndarray,
        rng: np.random.Generator,
        constraint: bool = False,
    ):
        """The FM-kernel GP under ``key``, refitted (:func:`common.fm_model.fit_fm_gp`) or
        conditioned as :func:`common.strategy.refit_or_reuse` says."""
        from common.fm_model import build_fm_gp, fit_fm_gp

        return refit_or_reuse(
            self,
            key,
            len(values),
            lambda params: loaded(build_fm_gp(layout, Z, values, constraint), params),
            lambda params: fit_fm_gp(layout, Z, values, rng, params, constraint=constraint),
            fit_subset=lambda rows: fit_fm_gp(
                layout, Z[rows], values[rows], rng, constraint=constraint
            ),
        )

    def suggest(
        self, space: MixedSpace, history: History, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        from common.acquisition import evaluate, log_expected_improvement
        from common.constraints import effective_values, feasibility
        from common.fm_kernel import FMLayout

        if len(history) == 0 or space.dim == 0:
            return random_configs(space, n, rng)
        layout = FMLayout.from_space(space, self.graphs, self.max_path_values)
        X = space.encode(history.configs)
        Z, y = layout.to_model(X), history.values
        key = ("bofm", layout.key())
        model = self._model(key, layout, Z, y, rng)
        best_f = model.train_targets.max()

        def fit_constraint(k: int, rows: np.ndarray, values: np.ndarray):
            return self._model((key, "constraint", k), layout, Z[rows], values, rng, True)

        feasible = feasibility(history, model.train_targets.detach().numpy(), fit_constraint)
        y = effective_values(history)  # sprays around the best: feasible trials first
        pending = encode_pending(space, history)
        busy = layout.to_model(pending)
        taken = _Taken(space, layout, np.vstack([X, pending]))
        lengthscales = hops = None  # the penaliser's distance, needed only with busy points
        if len(busy) or n > 1:
            lengthscales, hops = busy_point_geometry(model, layout)
        canonical = None
        if space.conditions:  # the conditional space's imputation, seen in model rows
            impute = layout.to_model(space.impute_row[None])[0]
            canonical = (lambda Z: space.active_mask(layout.to_space(Z)), impute)
        rows: list[np.ndarray] = []
        for _ in range(n):  # greedy batch: each pick joins the busy points of the next
            try:
                acqf = self.busy_acquisition(
                    lambda m: log_expected_improvement(m, best_f),
                    model,
                    np.vstack([busy, *rows]),
                    list(layout.cont_cols),
                    list(layout.graph_cols),
                    list(layout.n_nodes),
                    rng,
                    log_base=True,
                    lengthscales=lengthscales,
                    hops=hops,
                    canonical=canonical,
                    feasibility=feasible,
                )
                candidates, values = self._maximise(acqf, layout, Z, y, taken, rng)
                if space.snap is not None and len(candidates):
                    # the values of the configurations that will run, not of relaxed integers
                    candidates = layout.to_model(space.snap(layout.to_space(candidates)))
                    values = evaluate(acqf, candidates)
            except Exception as err:  # e.g. a posterior that cannot be computed: random points
                warn(
                    f"BO-FM acquisition failed ({type(err).__name__}: {err}); "
                    "random points instead.",
                    cause="bofm acquisition",
                )
                candidates, values = np.empty((0, layout.dim)), np.empty(0)
            rows.append(pick_distinct(taken, candidates, values, 1, rng))
        return space.decode(layout.to_space(np.vstack(rows)))

    def _maximise(self, acqf, layout, Z, y, taken, rng) -> tuple[np.ndarray, np.ndarray]:
        """Candidate rows and their acquisition values: local optima, then the scored pool."""
        from common.typewise_ascent import typewise_ascent

        starts, pool, pool_values = self._starts(acqf, layout, Z, y, rng)
        ends, end_values = typewise_ascent(
            acqf,
            layout,
            starts,
            rng,
            forbidden=None if layout.cont_cols else taken.contains,  # no repeats
        )
        return np.vstack([ends, pool]), np.concatenate([end_values, pool_values])

    def _starts(self, acqf, layout, Z, y, rng):
        """Random rows and sprays around the best observed rows, scored in one batch."""
        from common.typewise_ascent import evaluate, neighbours

        raw = layout.sample(self.n_raw, rng)
        centres = Z[np.argsort(y, kind="stable")[:3]]
        spray = centres[rng.integers(0, len(centres), size=self.n_spray)]
        if layout.cont_cols:
            cont = list(layout.cont_cols)
            # a third each: small and medium Gaussian steps, and a fresh uniform continuous part
            kind = rng.integers(0, 3, size=self.n_spray)
            scale = np.where(kind == 0, 0.01, 0.05)[:, None]
            noise = scale * rng.normal(size=(self.n_spray, len(cont)))
            moved = np.clip(spray[:, cont] + noise, 0.0, 1.0)
            fresh = rng.random((self.n_spray, len(cont)))
            spray[:, cont] = np.where((kind == 2)[:, None], fresh, moved)
        if layout.graphs:  # half of the sprays also move to a random graph neighbour
            move = np.flatnonzero(rng.random(self.n_spray) < 0.5)
            for i in move:
                rows, _ = neighbours(layout, spray[i : i + 1], rng)
                if len(rows):
                    spray[i] = rows[rng.integers(len(rows))]
        pool = np.vstack([spray, raw])
        values = evaluate(acqf, pool)
        half = self.n_starts // 2
        top_spray = np.argsort(-values[: self.n_spray], kind="stable")[:half]
        top_raw = self.n_spray + np.argsort(-values[self.n_spray :], kind="stable")
        chosen = list(top_spray) + list(top_raw[: self.n_starts - len(top_spray)])
        return pool[chosen], pool, values


# ------------------------------------------------------------------------------ busy points
def busy_point_geometry(model, layout) -> tuple:
    """PLAyBOOK's distance for the ModLap kernel: continuous lengthscales and graph hops.

    The kernel sees the continuous part only through ``t_p = 1 + (α_p / P) · Σ_i (Δ_i / θ_i)² / n``
    (``P`` graphs, ``n`` continuous columns), so one effective lengthscale unit is
    ``θ_i · sqrt(n / mean_p α_p)``. Discrete columns are measured in edges of their graph (a
    complete graph: mismatch; a path graph of integers: ``|i − i'|``).
    """
    import torch

    from common.fm_kernel import FMKernel
    from common.gp import DTYPE
    from common.penalization import graph_hops

    hops = [None if g.kind == "complete" else graph_hops(g.adjacency) for g in layout.graphs]
    kernel = next((m for m in model.covar_module.modules() if isinstance(m, FMKernel)), None)
    n_cont = len(layout.cont_cols)
    if kernel is None:  # no graph columns: a Matérn kernel, whose lengthscales are found
        return None, hops
    if n_cont:
        with torch.no_grad():
            scale = torch.sqrt(n_cont / kernel.alpha.mean().clamp_min(1e-6))
            lengthscales = (kernel.ls * scale).to(DTYPE).clamp(1e-3, 1e3)
    else:
        lengthscales = torch.ones(0, dtype=DTYPE)
    return lengthscales, hops


# ------------------------------------------------------------------------------ batch selection
# Each pick is the best *distinct* candidate (local optima first, then scored random and spray
# rows): never a duplicate of an evaluated, pending or already chosen configuration.
def pick_distinct(
    taken: _Taken, candidates: np.ndarray, values: np.ndarray, n: int, rng: np.random.Generator
) -> np.ndarray:
    """The ``n`` best model rows of ``candidates`` that duplicate nothing in ``taken`` (updated)."""
    chosen: list[np.ndarray] = []
    for i in np.argsort(-values, kind="stable"):
        if len(chosen) == n or not np.isfinite(values[i]):
            break
        if not taken.contains(candidates[i : i + 1])[0]:
            chosen.append(candidates[i])
            taken.add(candidates[i : i + 1])
    for attempt in range(100 * n):  # random rows; a small discrete space may be exhausted
        if len(chosen) == n:
            break
        row = taken.layout.sample(1, rng)
        if not taken.contains(row)[0] or attempt >= 50 * n:
            chosen.append(row[0])
            taken.add(row)
    return np.asarray(chosen)


class _Taken:
    """Configurations already evaluated, pending or chosen, as model rows of ``layout``: a
    :class:`common.configset.ConfigSet` (the one definition of the same configuration) seen
    through the layout's map to the space."""

    def __init__(self, space: MixedSpace, layout, X: np.ndarray):
        self.layout = layout
        self.configs = ConfigSet(space, X)

    def add(self, Z: np.ndarray) -> None:
        self.configs.add(self.layout.to_space(Z))

    def contains(self, Z: np.ndarray) -> np.ndarray:
        """Which model rows of ``Z`` duplicate a taken configuration."""
        if not len(Z):
            return np.zeros(0, dtype=bool)
        return self.configs.contains(self.layout.to_space(Z))
