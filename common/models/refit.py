"""When a GP's hyper-parameters are refitted (MAP) and when the last fit is conditioned on new data.

A fit costs O(n³) per iteration and one observation moves the MAP hyper-parameters of n by
O(1/n): past :data:`REFIT_GROWTH` observations a model is refitted once per 1% of growth, in
between the last fit's hyper-parameters are conditioned on all the data. The policy is a function
of the history's length alone, so every worker, copy and restored searcher agrees on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from common.models.gp import FIT_MAXITER, WARM_FIT_MAXITER, build_gp, fit_gp, load_parameters

if TYPE_CHECKING:
    from common.methods.strategy import Strategy

REFIT_GROWTH = 100  # past this many observations, hyper-parameters are refitted per 1% of growth


# A fit with nothing to start from sees at most this many points, evenly spread; conditioned on
# every observation, its hyper-parameters serve until the next scheduled refit, warm-started
# from them, sees everything (docs/decisions.md, "A new worker's first fit").
COLD_SUBSET = REFIT_GROWTH // 2
# That fit stops after as many L-BFGS-B iterations as a warm refit: its hyper-parameters are a
# starting point, which the next refit continues, as refits continue each other (docs/decisions.md,
# "Multi-objective studies": the same choices among the alternatives as at convergence).
COLD_SUBSET_MAXITER = WARM_FIT_MAXITER


def cold_subset(n_observations: int) -> np.ndarray:
    """Indices of the observations a fit from the priors uses in a long study: evenly spaced
    over the whole history (a function of its length only, so every worker picks the same)."""
    if n_observations <= COLD_SUBSET:
        return np.arange(n_observations)
    return np.unique(np.linspace(0, n_observations - 1, COLD_SUBSET).round().astype(int))


def refit_due(n_observations: int, every: int = 1) -> bool:
    """Whether a history of ``n_observations`` refits the GP's hyper-parameters (MAP), rather
    than conditioning the last fit's hyper-parameters on all the data.

    Every ``every``-th length, and past ``REFIT_GROWTH * every`` observations once per 1% of
    growth: one observation moves the MAP hyper-parameters of n by O(1/n), while a fit costs
    O(n³) per iteration (about 20 s at 1000 observations on one thread). A function of the
    length alone, so every worker, copy and restored searcher agrees on it; up to
    ``2 * REFIT_GROWTH - 1`` observations it is exactly ``every``.
    """
    step = max(every, n_observations // REFIT_GROWTH)
    return n_observations % step == 0


def refit_or_reuse(
    strategy: Strategy,
    key: Any,
    n_observations: int,
    condition: Callable,
    fit: Callable,
    every: int = 1,
    fit_subset: Callable | None = None,
    study_length: int | None = None,
):
    """The model under ``key``: ``fit(last_params)`` (returning the model and its parameters,
    remembered for the next warm start) where :func:`refit_due` says so or no earlier fit is
    known, else ``condition(last_params)``: the model with the earlier fit's hyper-parameters,
    conditioned on all data (``None`` where those parameters do not fit the model).

    With no earlier fit in a study longer than :data:`COLD_SUBSET` (the first worker of a long
    study, nothing stored with it), ``fit_subset(rows)`` fits the :func:`cold_subset` rows only
    (for at most :data:`COLD_SUBSET_MAXITER` iterations) and the model conditions those
    hyper-parameters on all data: a MAP estimate from a uniform subsample, refined by the next
    refit :func:`refit_due` asks for (within 1% more trials),
    instead of a fit from the priors that costs O(n³) per iteration (about 40 s at 1000 points) and
    most of a new worker's first suggestion at 100.

    ``n_observations`` are the model's rows; where they are part of a longer history (a trust
    region's nearest observations), ``study_length`` is that history's length, which sets when
    a refit is due.
    """
    params = strategy.warm_start(key)
    due = refit_due(n_observations if study_length is None else study_length, every)
    if params is not None and not due:
        model = condition(params)
        if model is not None:
            strategy.continue_from_latest(key, params, model)
            return model
    if params is None and fit_subset is not None and n_observations > COLD_SUBSET:
        _, params = fit_subset(cold_subset(n_observations))
        model = condition(params)
        if model is not None:
            strategy.remember(key, params)
            strategy.continue_from_latest(key, params, model)
            return model
    model, params = fit(params)
    strategy.remember(key, params)
    strategy.continue_from_latest(key, params, model)
    return model


def loaded(model, params):
    """``model`` with ``params`` loaded, in eval mode (``None`` if they do not fit it)."""
    if not load_parameters(model, params):
        return None
    model.eval()
    return model


def fit_or_condition(
    strategy: Strategy,
    key: Any,
    X: np.ndarray,
    values: np.ndarray,
    make_kernel: Callable,
    every: int = 1,
    warm_maxiter: int | None = None,
    constraint: bool = False,
    warping: str = "copula",
    study_length: int | None = None,
):
    """:func:`refit_or_reuse` for a GP of :func:`common.models.gp.fit_gp` (at most ``warm_maxiter``
    iterations from a warm start; :data:`common.models.gp.FIT_MAXITER` if ``None``; targets warped
    by ``warping``; refits due by ``study_length``, as there); a ``constraint``'s model has its
    own targets and noise."""

    def condition(params):
        return loaded(build_gp(X, values, make_kernel, constraint, warping), params)

    return refit_or_reuse(
        strategy,
        key,
        len(values),
        condition,
        lambda params: fit_gp(
            X, values, make_kernel, params, warm_maxiter or FIT_MAXITER, constraint, warping
        ),
        every,
        lambda rows: fit_gp(
            X[rows],
            values[rows],
            make_kernel,
            constraint=constraint,
            warping=warping,
            cold_maxiter=COLD_SUBSET_MAXITER,
        ),
        study_length,
    )


def constraint_fitter(
    strategy: Strategy,
    key: Any,
    X: np.ndarray,
    make_kernel: Callable,
    warm_maxiter=None,
    study_length: int | None = None,
) -> Callable:
    """``fit(k, rows, values)`` for :func:`common.acquisition.feasibility.feasibility`: the method's
    GP on constraint ``k``'s values at ``X[rows]``, warm-started per constraint, refitted as
    :func:`refit_due` says (of ``study_length`` where ``X`` is part of a longer history)."""

    def fit(k: int, rows: np.ndarray, values: np.ndarray):
        return fit_or_condition(
            strategy,
            (key, "constraint", k),
            X[rows],
            values,
            make_kernel,
            warm_maxiter=warm_maxiter,
            constraint=True,
            study_length=study_length,
        )

    return fit
