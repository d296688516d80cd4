"""CASMOPOLITAN: a GP with the transformed overlap kernel, searched locally inside trust regions.

Wan, Nguyen, Ha, Ru, Lu, Osborne. "Think global and act local: Bayesian optimisation over
high-dimensional categorical and mixed search spaces", ICML 2021 (seed 000 §5.6).

One GP (transformed overlap kernel, mixed with Matérn-5/2 when there are continuous dims) is fitted
to the whole history, the overlap kernel's form (the reference code's or the paper's Eq 5.11) chosen
at every refit by the MAP objective (:mod:`common.kernel_choice`); the acquisition is maximised by
local search inside a trust region around the best point of the current restart (a Hamming ball
and an ARD-shaped box) whose size follows TuRBO's success/failure rule; when it collapses, the
next restart is centred by GP-UCB on an auxiliary GP of the earlier restarts' bests. The
trust-region state is replayed from the ordered history on every call
(:func:`common.trust_region.replay`).

>>> strategy = CasmopolitanOptions(n_init=10).make(BusyPolicy())
>>> configs = strategy.suggest(space, history, 1, np.random.default_rng(0))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    canonical_inputs,
    check_choice,
    check_integer,
    check_number,
    constraint_fitter,
    encode_pending,
    random_configs,
    refit_or_reuse,
)

ACQUISITIONS = ("ei", "ucb")
WARPINGS = ("copula", "blend", "power")  # common.gp.WARPINGS' names, without importing torch here
CHOSEN_WARPINGS = ("blend", "power")  # warping="evidence": the one of higher evidence per fit


@dataclass(frozen=True)
class CasmopolitanOptions(MethodOptions):
    """CASMOPOLITAN's options.

    ``n_init`` observations form the initial design (they set the first centre but do not count as
    successes or failures); ``acquisition`` is ``"ei"`` (log expected improvement over the
    centre's observed value) or ``"ucb"`` (with ``kappa``); ``kappa`` also weighs the restart
    UCB. ``failure_tolerance`` ``None`` means
    :func:`common.trust_region.default_failure_tolerance` of the box's dimension for the box and
    :func:`common.trust_region.default_hamming_failure_tolerance` for the Hamming ball; a number
    applies to both. ``n_starts`` local searches run per suggestion, from the centre and the best
    of ``n_raw`` random rows of the trust region (:func:`common.local_search.local_optima`;
    the reference code's 3, and 256). GP hyper-parameters are refitted every ``refit_every``
    observations (1: every call; the fit dominates the cost of a suggestion with many ARD weights)
    and reused, conditioned on all data, in between.
    ``warping`` names the GPs' target warping (:data:`common.gp.WARPINGS`): ``"copula"``,
    Gaussian-copula ranks as in the paper's code; ``"blend"``, the mean of those ranks' and a
    Box-Cox power transform's z-scores, which also keeps how much worse a value is
    (:func:`common.gp.blend_standardise`); ``"power"``, the power transform alone; or
    ``"evidence"``, the blend or the power transform, whichever fit has the higher evidence for
    the values themselves (:func:`common.kernel_choice.fit_choosing`), decided at every refit.
    ``second_opinion`` (with ``acquisition="ei"``): on a space with numeric parameters and a
    categorical of three or more values, the suggestion is the candidate of the local search that
    CoCaBO's additive model also expects to improve (:mod:`common.second_opinion`).
    """

    n_init: int = 10
    acquisition: str = "ei"
    kappa: float = 2.0
    failure_tolerance: int | None = None
    success_tolerance: int = 3
    n_starts: int = 3
    n_raw: int = 256
    refit_every: int = 2
    warping: str = "copula"
    second_opinion: bool = False

    def __post_init__(self) -> None:
        check_integer("n_init", self.n_init, 0)
        check_choice("acquisition", self.acquisition, ACQUISITIONS)
        check_number("kappa", self.kappa, 0.0)
        if self.failure_tolerance is not None:
            check_integer("failure_tolerance", self.failure_tolerance, 1)
        check_integer("success_tolerance", self.success_tolerance, 1)
        check_integer("n_starts", self.n_starts, 1)
        check_integer("n_raw", self.n_raw, 1)
        check_integer("refit_every", self.refit_every, 1)
        check_choice("warping", self.warping, (*WARPINGS, "evidence"))

    @property
    def warpings(self) -> tuple[str, ...]:
        """The target warpings each fit chooses among
        (:func:`common.kernel_choice.fit_choosing`)."""
        return CHOSEN_WARPINGS if self.warping == "evidence" else (self.warping,)

    def make(self, busy: BusyPolicy) -> Casmopolitan:
        return Casmopolitan(self, busy)


class Casmopolitan(Strategy):
    """CASMOPOLITAN with trust regions replayed from the history.

    Busy points (pending configurations and a batch's earlier picks) are handled as ``busy``
    says: PLAyBOOK's penalisation of the local acquisition by default
    (:mod:`common.penalization`); restart centres are only kept apart from them.
    """

    def __init__(
        self, options: CasmopolitanOptions = CasmopolitanOptions(), busy: BusyPolicy = BusyPolicy()
    ) -> None:
        super().__init__(busy)
        self.options = options

    def trust_region_state(self, space: MixedSpace, history: History):
        """The trust-region state after ``history`` (a pure function of its ordered values)."""
        from common.trust_region import TrustRegionConfig, replay

        config = TrustRegionConfig.for_dims(
            len(space.cat_dims),
            len(space.cont_dims),
            self.options.n_init,
            failure_tolerance=self.options.failure_tolerance,
            success_tolerance=self.options.success_tolerance,
        )
        from common.constraints import effective_values

        return replay(effective_values(history), config)

    def suggest(
        self, space: MixedSpace, history: History, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        from common.constraints import effective_values, feasibility

        if len(history) == 0 or space.dim == 0:
            return random_configs(space, n, rng)
        X = space.encode(history.configs)
        y = effective_values(history)  # trust regions and restarts: feasible trials first
        cat, cont = list(space.cat_dims), list(space.cont_dims)
        state = self.trust_region_state(space, history)
        busy = encode_pending(space, history)
        seen = ConfigSet(space, X)
        seen.add(busy)
        if state.needs_centre:
            pick = self._restart_picker(space, X, y, state)
        else:
            kernels = casmopolitan_kernels(cont, cat)
            model = self._model(space, X, history.values, kernels)
            fit = constraint_fitter(self, self._fit_key(space), X, kernels[0])
            feasible = feasibility(history, model.train_targets.detach().numpy(), fit)
            second = self._second_model(space, X, history.values)
            pick = self._local_picker(space, model, X, state, feasible, second)
        return space.decode(select_sequentially(pick, n, seen, busy, space, rng))

    def _fit_key(self, space: MixedSpace) -> tuple:
        """The warm-start key of this space's fits: fits to other targets (another warping) are
        not this model's, even where a study's workers run both. Fits stored before the kernel
        choice (one kernel's parameters, under ``"casmopolitan"``) are not adopted: a study
        resumed after an upgrade starts as a new worker does (on a subsample in a long study),
        not from the priors on every trial."""
        if self.options.warping == "copula":
            return ("casmopolitan-choice", space)
        return ("casmopolitan-choice", self.options.warping, space)

    def _model(self, space: MixedSpace, X: np.ndarray, y: np.ndarray, kernels: list[Callable]):
        """The GP, its kernel chosen among ``kernels`` by the MAP objective
        (:mod:`common.kernel_choice`): hyper-parameters refitted (warm-started) on every
        ``refit_every``-th history length (and per 1% of growth in long studies:
        :func:`common.strategy.refit_due`), otherwise the previous fit's kernel and
        hyper-parameters conditioned on all the data. A refit continues from the previous one for
        at most :data:`common.gp.WARM_FIT_MAXITER` iterations."""
        from common.gp import FIT_MAXITER, WARM_FIT_MAXITER
        from common.kernel_choice import condition_choice, fit_choosing

        warpings = self.options.warpings
        return refit_or_reuse(
            self,
            self._fit_key(space),
            len(y),
            lambda params: condition_choice(X, y, kernels, params, warpings),
            lambda params: fit_choosing(X, y, kernels, params, WARM_FIT_MAXITER, warpings),
            self.options.refit_every,
            lambda rows: fit_choosing(X[rows], y[rows], kernels, None, FIT_MAXITER, warpings),
        )

    def _second_model(self, space: MixedSpace, X: np.ndarray, values: np.ndarray):
        """CoCaBO's additive model where the options and the space call for a second opinion
        (:mod:`common.second_opinion`), else ``None``; a failed fit gives ``None`` too."""
        from common.second_opinion import additive_model, applies

        if not (self.options.second_opinion and self.options.acquisition == "ei"):
            return None
        if not applies(space):
            return None
        try:
            return additive_model(self, space, X, values, self.options.refit_every)
        except Exception as err:  # the product model alone still suggests
            warn(f"The additive model's fit failed ({err}); no second opinion.", cause="additive")
            return None

    # ------------------------------------------------------------------ the two kinds of point
    def _restart_picker(self, space, X, y, state) -> Callable:
        from common.restart_centre import choose_restart_centre

        def pick(seen, busy, rng):
            return choose_restart_centre(
                space,
                X,
                y,
                state,
                rng,
                kappa=self.options.kappa,
                exclude=seen,
                warpings=self.options.warpings[:1],  # a few restart bests: no evidence
            )

        return pick

    def _local_picker(self, space, model, X, state, feasible=None, second=None) -> Callable:
        """The best row of the trust region by the acquisition, or, with a ``second`` model,
        by both (:func:`common.second_opinion.best_by_both`)."""
        from common.local_search import best_end, local_optima, sample_in_region
        from common.trust_region import region_of

        centre = X[state.best_index]
        below, above = space.grid_neighbours(centre[None])
        region = region_of(
            state,
            centre,
            space.cat_dims,
            space.cont_dims,
            _lengthscales(model),
            reach=(below[0], above[0]),
        )
        incumbent = float(model.train_targets[state.best_index])  # the centre's observed value
        canonical = canonical_inputs(space)
        second_acqf = None
        if second is not None:
            from common.acquisition import CanonicalInputs, log_expected_improvement

            second_acqf = log_expected_improvement(second, second.train_targets[state.best_index])
            if canonical is not None:
                second_acqf = CanonicalInputs(second_acqf, *canonical)

        def pick(seen, busy, rng):
            try:
                acqf = self.busy_acquisition(
                    lambda m: self._acquisition(m, incumbent),
                    model,
                    busy,
                    list(space.cont_dims),
                    list(space.cat_dims),
                    space.n_choices,
                    rng,
                    log_base=self.options.acquisition == "ei",
                    canonical=canonical,
                    feasibility=feasible,
                )
                ends, values = local_optima(
                    acqf,
                    space,
                    region,
                    seen,
                    rng,
                    n_starts=self.options.n_starts,
                    n_raw=self.options.n_raw,
                )
                best = best_end(values)
                found = None if best is None else ends[best]
                if found is not None and second_acqf is not None:
                    ends = ends[np.isfinite(values)]
                    chosen = both_choose(acqf, second_acqf, ends, space, region, seen, rng)
                    found = found if chosen is None else chosen
            except Exception as err:  # numerical trouble: a random point of the region
                warn(
                    f"Local search failed ({err}); sampling the trust region.", cause="local search"
                )
                found = None
            if found is not None:
                return found
            rows = sample_in_region(space, region, 64, rng)
            fresh = rows[~seen.contains(rows)]
            return fresh[0] if len(fresh) else space.sample(1, rng)[0]

        return pick

    def _acquisition(self, model, incumbent: float):
        """Log EI over the centre's observed (standardised, negated) value, or UCB.

        Not over the GP mean at the centre: the fitted noise shrinks that mean below the observed
        value, so points next to the centre keep a spurious improvement and the search re-samples
        the incumbent's categories instead of trying new ones (Jones et al. 1998 use the observed
        best).
        """
        from common.acquisition import log_expected_improvement, upper_confidence_bound

        if self.options.acquisition == "ucb":
            return upper_confidence_bound(model, self.options.kappa)
        return log_expected_improvement(model, incumbent)


def both_choose(acqf, second_acqf, ends, space, region, seen, rng) -> np.ndarray | None:
    """Among the local searches' ``ends`` and the region centre's unseen single-category
    neighbours inside the region, the row both models expect to improve
    (:func:`common.second_opinion.best_by_both`); ``None`` where that fails."""
    from common.local_search import MAX_NEIGHBOURS, hamming_neighbours
    from common.second_opinion import best_by_both

    neighbours = hamming_neighbours(region.centre[None], space, rng, MAX_NEIGHBOURS)[0]
    neighbours = neighbours[region.contains(neighbours) & ~seen.contains(neighbours)]
    try:
        return best_by_both(acqf, second_acqf, np.vstack([ends, neighbours]), rng)
    except Exception as err:  # the product model's choice stands
        warn(f"The second opinion failed ({err}); using the acquisition's best.", cause="both")
        return None


def casmopolitan_kernels(cont_dims: Sequence[int], cat_dims: Sequence[int]) -> list[Callable]:
    """The kernels a CASMOPOLITAN GP chooses among (:mod:`common.kernel_choice`): with
    categoricals, the transformed overlap kernel in the reference code's form and in the paper's
    (:data:`common.kernels.OVERLAP_FORMS`), else the one Matérn kernel."""
    from functools import partial

    from common.kernels import OVERLAP_FORMS, casmopolitan_kernel

    forms = OVERLAP_FORMS if len(cat_dims) else OVERLAP_FORMS[:1]
    return [partial(casmopolitan_kernel, list(cont_dims), list(cat_dims), form) for form in forms]


def select_sequentially(
    pick: Callable, n: int, seen, busy: np.ndarray, space: MixedSpace, rng: np.random.Generator
) -> np.ndarray:
    """``n`` rows picked greedily: ``pick(seen, busy, rng)`` sees the pending rows and the
    batch's earlier picks as busy points (PLAyBOOK), and never returns a row of ``seen``."""
    rows: list[np.ndarray] = []
    for _ in range(n):
        row = np.asarray(pick(seen, np.vstack([busy, *rows]) if rows else busy, rng), dtype=float)
        rows.append(row[None])
        seen.add(row[None])
    return np.vstack(rows).reshape(n, space.dim)


def _lengthscales(model) -> np.ndarray | None:
    """The Matérn ARD lengthscales of the continuous columns, if the kernel has them."""
    from gpytorch.kernels import MaternKernel

    for module in model.covar_module.modules():
        if isinstance(module, MaternKernel):
            return module.lengthscale.detach().numpy().reshape(-1)
    return None
