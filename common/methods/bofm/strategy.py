"""BO-FM: a GP with the frequency-modulated ModLap kernel and log-EI, maximised type-wise.

Oh, Gavves, Welling. "Mixed variable Bayesian optimization with frequency modulated kernels",
UAI 2021; also C. Oh, "Bayesian optimization on non-conventional search spaces", PhD thesis,
University of Amsterdam, 2023, ch. 5 and App. C.

>>> strategy = BOFMOptions().make(BusyPolicy())
>>> configs = strategy.suggest(space, history, 1, np.random.default_rng(0))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from common.acquisition.feasibility import effective_values, feasibility
from common.acquisition.functions import evaluate, log_expected_improvement
from common.batch.busy import BusyPolicy
from common.batch.greedy import greedy_batch
from common.batch.penalization import graph_hops
from common.batch.pending import encode_pending
from common.log import warn
from common.methods.bofm.fm_model import build_fm_gp, fit_fm_gp
from common.methods.strategy import Strategy, random_configs
from common.models.gp import DTYPE
from common.models.kernels.frequency_modulated import PATH_GRAPH_MAX_VALUES, FMKernel, FMLayout
from common.models.refit import loaded, refit_or_reuse
from common.optim.typewise_ascent import neighbours, typewise_ascent
from common.space.configset import ConfigSet
from common.space.history import History
from common.space.mixed_space import MixedSpace

if TYPE_CHECKING:
    from common.methods.bofm.options import BOFMOptions


class BOFM(Strategy):
    """BO-FM with the ModLap kernel, MAP-fitted with restarts, and log-EI maximised type-wise.

    Busy points (pending configurations and a batch's earlier picks) are handled as ``busy`` says:
    PLAyBOOK's penalisation by default (:mod:`common.batch.penalization`), with distances in graph
    hops on the discrete columns (:func:`busy_point_geometry`).
    """

    def __init__(self, options: BOFMOptions, busy: BusyPolicy = BusyPolicy()) -> None:
        super().__init__(busy)

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
        """The FM-kernel GP under ``key``, refitted (:func:`common.methods.bofm.fm_model.fit_fm_gp`)
        or conditioned as :func:`common.models.refit.refit_or_reuse` says."""
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

        def pick(i: int, busy_rows: np.ndarray) -> np.ndarray:
            try:
                acqf = self.busy_acquisition(
                    lambda m: log_expected_improvement(m, best_f),
                    model,
                    busy_rows,
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
            return pick_distinct(taken, candidates, values, 1, rng)  # joins ``taken`` itself

        return space.decode(layout.to_space(greedy_batch(pick, n, busy)))

    def _maximise(self, acqf, layout, Z, y, taken, rng) -> tuple[np.ndarray, np.ndarray]:
        """Candidate rows and their acquisition values: local optima, then the scored pool."""
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
    :class:`common.space.configset.ConfigSet` (the one definition of the same configuration) seen
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
