"""CASMOPOLITAN: a GP with the transformed overlap kernel, searched locally inside trust regions.

Wan, Nguyen, Ha, Ru, Lu, Osborne. "Think global and act local: Bayesian optimisation over
high-dimensional categorical and mixed search spaces", ICML 2021; also B. Ru, "Bayesian
Optimisation for Automated Machine Learning", DPhil thesis, University of Oxford, 2022, §5.6.

One GP (transformed overlap kernel, mixed with Matérn-5/2 when there are continuous dims) is fitted
to the history, in a long study to the observations nearest the trust region's centre
(:func:`common.methods.casmopolitan.trust_region.nearest_rows`, the region's Hamming radius then
no wider than they reach), the overlap kernel's form (the
reference code's or Eq. 5.11 of Ru's thesis) chosen at every refit by the MAP objective
(:mod:`common.models.kernel_choice`); the acquisition is maximised by local search inside a trust
region around the best point of the current restart (a Hamming ball and an ARD-shaped box) whose
size follows TuRBO's success/failure rule; when it collapses, the next restart is centred by
GP-UCB on an auxiliary GP of the earlier restarts' bests.
In a multi-objective study the trust region follows the suggestion's random Chebyshev
scalarisation (ParEGO's, :mod:`common.acquisition.scalarization`): its centre is that
scalarisation's best trial. Inside it, one GP per objective scores the candidates by the log
expected hypervolume improvement over the feasible front (:mod:`common.acquisition.hypervolume`),
which extends the front wherever it is thin, not only along the weights' ray.
The trust-region state is a function of the ordered history
(:func:`common.methods.casmopolitan.trust_region.replay`), continued from the last call's where
the history only grew.

>>> strategy = CasmopolitanOptions(n_init=10).make(BusyPolicy())
>>> configs = strategy.suggest(space, history, 1, np.random.default_rng(0))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from common.acquisition.feasibility import effective_values, feasibility
from common.acquisition.functions import (
    CanonicalInputs,
    log_expected_improvement,
    upper_confidence_bound,
)
from common.acquisition.hypervolume import ObjectiveModels
from common.batch.busy import BusyPolicy
from common.batch.greedy import greedy_batch
from common.batch.pending import encode_pending
from common.log import warn
from common.methods.casmopolitan.polish import (
    START,
    Polish,
    PolishTrace,
    extend_polish,
    movable_rows,
    polish_step,
    replay_polish,
)
from common.methods.casmopolitan.polish import applies as polish_applies
from common.methods.casmopolitan.restart_centre import choose_restart_centre
from common.methods.casmopolitan.trust_region import (
    TrustRegionConfig,
    TrustRegionState,
    nearest_rows,
    pass_over,
    region_of,
    replay,
    update_state,
    within_reach,
)
from common.methods.second_opinion import additive_model, applies, best_by_both
from common.methods.strategy import Strategy, canonical_inputs, random_configs
from common.models.gp import WARM_FIT_MAXITER
from common.models.kernel_choice import condition_choice, fit_choosing
from common.models.kernels.mixture import casmopolitan_kernels
from common.models.refit import COLD_SUBSET_MAXITER, constraint_fitter, refit_or_reuse
from common.optim.local_search import (
    MAX_NEIGHBOURS,
    best_end,
    hamming_neighbours,
    local_optima,
    sample_in_region,
)
from common.space.configset import ConfigSet
from common.space.grown import GrownRows, encoding_key
from common.space.history import History
from common.space.mixed_space import MixedSpace

if TYPE_CHECKING:
    from common.methods.casmopolitan.options import CasmopolitanOptions


class Casmopolitan(Strategy):
    """CASMOPOLITAN with trust regions replayed from the history.

    Busy points (pending configurations and a batch's earlier picks) are handled as ``busy``
    says: PLAyBOOK's penalisation of the local acquisition by default
    (:mod:`common.batch.penalization`); restart centres are only kept apart from them.
    """

    # the last trust-region state, with the configuration and values it was replayed from
    _replayed: tuple[TrustRegionConfig, np.ndarray, TrustRegionState] | None = None
    # the last polish replay, with the space's encoding key, values and rows it was replayed from
    _polished: tuple[tuple, np.ndarray, np.ndarray, PolishTrace] | None = None

    def __init__(self, options: CasmopolitanOptions, busy: BusyPolicy = BusyPolicy()) -> None:
        super().__init__(busy)
        self.options = options
        self._rows = GrownRows()

    def polish(self, space: MixedSpace, history: History, X: np.ndarray | None = None) -> Polish:
        """The incumbent's polish after ``history`` (:mod:`common.methods.casmopolitan.polish`;
        ``X``: its encoded rows, where the caller has them), where the options ask for it; else
        none (every trial the trust region's)."""
        values = effective_values(history)
        enabled = self.options.polish and polish_applies(space, history.n_objectives)
        if not enabled:
            return replay_polish(values, False)
        X = space.encode(history.configs) if X is None else X
        trace, last = START, self._polished
        if last is not None and last[0] == encoding_key(space) and len(last[1]) <= len(values):
            n = len(last[1])  # the same study grown: continue over its new observations only
            if np.array_equal(last[1], values[:n]) and np.array_equal(last[2], X[:n], True):
                trace = last[3]
        new = X[trace.n :]
        floats = set(space.float_dims)
        kept = [j for j in range(X.shape[1]) if j not in floats]  # a step keeps these columns
        keys = [tuple(row) for row in new[:, kept].tolist()] if kept else None
        trace = extend_polish(trace, values, keys, movable_rows(space, new))
        self._polished = (encoding_key(space), np.array(values), np.array(X), trace)
        return trace.polish

    def trust_region_state(
        self, space: MixedSpace, history: History, steps: np.ndarray | None = None
    ) -> TrustRegionState:
        """The trust-region state after ``history`` (a pure function of its ordered values,
        continued from the last call's state where those values begin this history's); the
        polish ``steps``' observations (:meth:`polish`'s where not given) are passed over."""
        config = TrustRegionConfig.for_dims(
            len(space.cat_dims),
            len(space.cont_dims),
            self.options.n_init,
            failure_tolerance=self.options.failure_tolerance,
            success_tolerance=self.options.success_tolerance,
        )
        values = effective_values(history)
        others = self.polish(space, history).steps if steps is None else steps
        last = self._replayed
        if (
            last is not None
            and last[0] == config
            and len(last[1]) <= len(values)
            and np.array_equal(last[1], values[: len(last[1])])
        ):  # the same study grown: fold in its new observations only (steps are causal)
            state = last[2]
            for i in range(len(last[1]), len(values)):
                state = pass_over(state) if others[i] else update_state(state, values[i])
        else:
            state = replay(values, config, others)
        self._replayed = (config, np.array(values), state)
        return state

    def suggest(
        self, space: MixedSpace, history: History, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        if len(history) == 0 or space.dim == 0:
            return random_configs(space, n, rng)
        X = self._rows.encode(space, history.configs)  # the new observations' rows only
        y = effective_values(history)  # trust regions and restarts: feasible trials first
        cat, cont = list(space.cat_dims), list(space.cont_dims)
        polish = self.polish(space, history, X)
        state = self.trust_region_state(space, history, polish.steps)
        busy = encode_pending(space, history)
        taken = ConfigSet(space, X)
        taken.add(busy)
        position = len(history) + len(history.pending)  # this suggestion's, in a parallel study
        due = polish.turns(position, n)
        steps = [polish_step(space, X, y, polish.sigma, rng) for _ in range(due)]
        if len(steps) == n:
            return space.decode(np.array(steps))
        if steps:  # a batch's polish steps are busy for its trust-region picks
            busy = np.vstack([busy, steps])
        if state.needs_centre:
            pick = self._restart_picker(space, X, y, state)
        else:  # the trust region's models see its own observations nearest its centre
            own = np.flatnonzero(~polish.steps)
            local = own[nearest_rows(X[own], X[state.best_index], cat, cont)]
            near, Xn = history.subset(local), X[local]
            length = len(history) if len(local) < len(history) else None  # refits' cadence
            centre = int(np.searchsorted(local, state.best_index))
            if length is not None:
                state = within_reach(state, Xn, centre, cat)
            kernels = casmopolitan_kernels(cont, cat)
            model = self._model(space, Xn, near.values, kernels, length)
            fit = constraint_fitter(self, self._fit_key(space), Xn, kernels[0], study_length=length)
            feasible = feasibility(near, model.train_targets.detach().numpy(), fit)
            if near.n_objectives > 1:  # the candidates' scores: one GP per objective
                models = [
                    self._model(space, Xn, near.objectives[:, j], kernels, length, ("objective", j))
                    for j in range(near.n_objectives)
                ]
                front = near.feasible if near.constrained else np.ones(len(near), bool)
                objectives = ObjectiveModels(models, front)
                pick = self._local_picker(
                    space, model, Xn, centre, state, feasible, objectives=objectives
                )
            else:
                second = self._second_model(space, Xn, near.values, length)
                pick = self._local_picker(space, model, Xn, centre, state, feasible, second)
        rows = greedy_batch(
            lambda i, busy_rows: pick(taken, busy_rows, rng), n - len(steps), busy, taken
        )
        return space.decode(np.vstack([*steps, rows]) if steps else rows)

    def _fit_key(self, space: MixedSpace) -> tuple:
        """The warm-start key of this space's fits: fits to other targets (another warping) are
        not this model's, even where a study's workers run both. Fits stored before the kernel
        choice (one kernel's parameters, under ``"casmopolitan"``) are not adopted: a study
        resumed after an upgrade starts as a new worker does (on a subsample in a long study),
        not from the priors on every trial."""
        if self.options.warping == "copula":
            return ("casmopolitan-choice", space)
        return ("casmopolitan-choice", self.options.warping, space)

    def _model(
        self,
        space: MixedSpace,
        X: np.ndarray,
        y: np.ndarray,
        kernels: list[Callable],
        study_length: int | None = None,
        target: tuple = (),
    ):
        """The GP, its kernel chosen among ``kernels`` by the MAP objective
        (:mod:`common.models.kernel_choice`) on the rows ``X``: hyper-parameters refitted
        (warm-started) at every ``refit_every``-th length of the history (``study_length`` where
        ``X`` is part of it; per 1% of growth in long studies:
        :func:`common.models.refit.refit_due`), otherwise the previous fit's kernel and
        hyper-parameters conditioned on all of ``X``. A refit continues from the previous one for
        at most :data:`common.models.gp.WARM_FIT_MAXITER` iterations. ``target`` tells apart the
        fits of a multi-objective study's objectives (``("objective", j)``) from the
        scalarisation's."""
        warpings = self.options.warpings
        return refit_or_reuse(
            self,
            self._fit_key(space) + target,
            len(y),
            lambda params: condition_choice(X, y, kernels, params, warpings),
            lambda params: fit_choosing(X, y, kernels, params, WARM_FIT_MAXITER, warpings),
            self.options.refit_every,
            lambda rows: fit_choosing(
                X[rows], y[rows], kernels, warpings=warpings, cold_maxiter=COLD_SUBSET_MAXITER
            ),
            study_length,
        )

    def _second_model(
        self, space: MixedSpace, X: np.ndarray, values: np.ndarray, study_length: int | None = None
    ):
        """CoCaBO's additive model where the options and the space call for a second opinion
        (:mod:`common.methods.second_opinion`), else ``None``; a failed fit gives ``None`` too."""
        if not (self.options.second_opinion and self.options.acquisition == "ei"):
            return None
        if not applies(space):
            return None
        try:
            return additive_model(self, space, X, values, self.options.refit_every, study_length)
        except Exception as err:  # the product model alone still suggests
            warn(f"The additive model's fit failed ({err}); no second opinion.", cause="additive")
            return None

    # ------------------------------------------------------------------ the two kinds of point
    def _restart_picker(self, space, X, y, state) -> Callable:
        def pick(taken, busy, rng):
            return choose_restart_centre(
                space,
                X,
                y,
                state,
                rng,
                kappa=self.options.kappa,
                exclude=taken,
                warpings=self.options.warpings[:1],  # a few restart bests: no evidence
            )

        return pick

    def _local_picker(
        self, space, model, X, at, state, feasible=None, second=None, objectives=None
    ) -> Callable:
        """The best row of the trust region around ``X[at]`` by the acquisition, or, with a
        ``second`` model, by both (:func:`common.methods.second_opinion.best_by_both`).

        With a multi-objective study's ``objectives``
        (:class:`common.acquisition.hypervolume.ObjectiveModels`) the base acquisition is their
        log EHVI over the feasible front; ``model``, the GP of the suggestion's scalarisation,
        still shapes the region and measures PLAyBOOK's penalisers, and under the Kriging
        believer the objectives' models believe the busy points."""
        centre = X[at]
        below, above = space.grid_neighbours(centre[None])
        region = region_of(
            state,
            centre,
            space.cat_dims,
            space.cont_dims,
            _lengthscales(model),
            reach=(below[0], above[0]),
        )
        incumbent = float(model.train_targets[at])  # the centre's observed value
        canonical = canonical_inputs(space)
        second_acqf = None
        if second is not None:
            second_acqf = log_expected_improvement(second, second.train_targets[at])
            if canonical is not None:
                second_acqf = CanonicalInputs(second_acqf, *canonical)

        if objectives is not None and feasible is not None:  # the base is over feasible rows
            feasible = dataclasses.replace(feasible, keep_base=True)
        believe = objectives is not None and self.busy.pending == "kriging_believer"
        ehvi = None if objectives is None or believe else objectives.acquisition()  # one front

        def pick(taken, busy, rng):
            try:
                make_base = lambda m: self._acquisition(m, incumbent)  # noqa: E731
                if objectives is not None:  # the busy points' means join the front if believed
                    base = objectives.acquisition(busy, believe=True) if believe else ehvi
                    make_base = lambda m: base  # noqa: E731
                acqf = self.busy_acquisition(
                    make_base,
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
                    taken,
                    rng,
                    n_starts=self.options.n_starts,
                    n_raw=self.options.n_raw,
                )
                best = best_end(values)
                found = None if best is None else ends[best]
                if found is not None and second_acqf is not None:
                    ends = ends[np.isfinite(values)]
                    chosen = both_choose(acqf, second_acqf, ends, space, region, taken, rng)
                    found = found if chosen is None else chosen
            except Exception as err:  # numerical trouble: a random point of the region
                warn(
                    f"Local search failed ({err}); sampling the trust region.", cause="local search"
                )
                found = None
            if found is not None:
                return found
            rows = sample_in_region(space, region, 64, rng)
            fresh = rows[~taken.contains(rows)]
            return fresh[0] if len(fresh) else space.sample(1, rng)[0]

        return pick

    def _acquisition(self, model, incumbent: float):
        """Log EI over the centre's observed (standardised, negated) value, or UCB.

        Not over the GP mean at the centre: the fitted noise shrinks that mean below the observed
        value, so points next to the centre keep a spurious improvement and the search re-samples
        the incumbent's categories instead of trying new ones (Jones et al. 1998 use the observed
        best).
        """
        if self.options.acquisition == "ucb":
            return upper_confidence_bound(model, self.options.kappa)
        return log_expected_improvement(model, incumbent)


def both_choose(acqf, second_acqf, ends, space, region, taken, rng) -> np.ndarray | None:
    """Among the local searches' ``ends`` and the region centre's unseen single-category
    neighbours inside the region, the row both models expect to improve
    (:func:`common.methods.second_opinion.best_by_both`); ``None`` where that fails."""
    neighbours = hamming_neighbours(region.centre[None], space, rng, MAX_NEIGHBOURS)[0]
    neighbours = neighbours[region.contains(neighbours) & ~taken.contains(neighbours)]
    try:
        return best_by_both(acqf, second_acqf, np.vstack([ends, neighbours]), rng)
    except Exception as err:  # the product model's choice stands
        warn(f"The second opinion failed ({err}); using the acquisition's best.", cause="both")
        return None


def _lengthscales(model) -> np.ndarray | None:
    """The Matérn ARD lengthscales of the continuous columns, if the kernel has them."""
    from gpytorch.kernels import MaternKernel

    for module in model.covar_module.modules():
        if isinstance(module, MaternKernel):
            return module.lengthscale.detach().numpy().reshape(-1)
    return None
