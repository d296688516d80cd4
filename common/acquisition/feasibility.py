"""Constraints: the probability that a candidate is feasible, from one GP per constraint.

Constrained expected improvement (Gardner et al., ICML 2014; Gelbart, Snoek and Adams, UAI 2014),
as Optuna's GPSampler uses it: a trial is feasible when each of its constraint values is ≤ 0; each
constraint gets a GP (the method's own model, fitted on the trials that report that constraint),
and every method maximises

    log EI(x; best feasible observed value) + Σ_k log P(c_k(x) ≤ 0).

Before the first feasible trial there is nothing to improve on, and the acquisition is the log
probability of feasibility alone: the search seeks feasibility first. The objective's model still
learns from every trial, feasible or not. Every constraint is modelled, also one no trial has
violated yet: where the search goes next, it may bind. PLAyBOOK's penalisation of busy points
applies to the log-EI as usual.

Candidates are held to a probabilistic constraint, as in Gelbart et al.: P(feasible) ≥ 0.5
(:data:`common.acquisition.feasibility.MIN_FEASIBILITY`): a candidate below it is ranked below every
candidate that meets it, and by its probability alone. Without it, log EI, which spans many
orders of magnitude, outweighs any log probability: a point beyond a constraint's boundary with a
large improvement and one chance in a thousand of being feasible beat a sure small improvement on
the boundary (the pressure vessel's optimum lies on one), again and again.

The constraint models' targets are the values standardised affinely
(:func:`common.models.warpings.constraint_standardise`; the objective's model uses warped targets),
as Optuna's GPSampler does: "c_k ≤ 0" is an exact threshold on the model's scale, and a linear
constraint stays linear, which a stationary GP extrapolates correctly far from the trials. (Ranks,
and a signed logarithm, bent them: the models then called the far corners of the pressure vessel's
space feasible, and every method went there.) Where satisfied trials report exactly 0 (a
violation amount, ``max(0, g)``), the threshold lies just past 0, so that points the model is sure
are at 0 count as feasible rather than as a coin toss
(:func:`common.models.warpings.constraint_threshold`).

Trials without constraint values in a constrained study (an objective that failed to call
``set_constraint``, a ``constraints_func`` added mid-study): the objective model uses them, each
constraint model leaves them out, and their feasibility counts as unknown, so they are never the
incumbent (:func:`effective_values` ranks them with the infeasible ones).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from botorch.acquisition import (
    AcquisitionFunction,
)
from botorch.models.model import Model

from common.acquisition.functions import log_expected_improvement
from common.models.warpings import constraint_standardise, constraint_threshold
from common.space.history import History


def effective_values(history: History) -> np.ndarray:
    """Values for a method's own bookkeeping (trust-region centres, bandit rewards, sprays
    around the best): every feasible trial before every other, those ordered by their total
    violation (unknown: none). The objective's GP still models ``history.values``."""
    values = history.values
    if not history.constrained or not len(values):
        return values
    feasible = history.feasible
    violation = np.nansum(np.maximum(history.constraints, 0.0), axis=1)
    span = float(values.max() - values.min()) or 1.0
    ranks = np.argsort(np.argsort(violation, kind="stable"), kind="stable")
    worse = values.max() + span * (1.0 + ranks / max(len(values), 1))
    return np.where(feasible, values, worse)


@dataclass
class Feasibility:
    """The constraint models with their thresholds, and the best feasible objective target."""

    models: list[tuple[Any, float]]
    best_f: float | None
    keep_base: bool = False  # the method's base is over the feasible trials already (EHVI)

    def base(self, make_base: Callable) -> Callable:
        """The base acquisition of a constrained study: log EI over the best feasible observed
        value, or nothing (zero) before a feasible trial; ``make_base`` itself where
        ``keep_base`` says it improves on the feasible trials only (the hypervolume of the
        feasible front, :class:`common.acquisition.hypervolume.ObjectiveModels`)."""
        if self.keep_base:
            return make_base
        if self.best_f is None:
            return ZeroAcquisition
        best_f = self.best_f
        return lambda model: log_expected_improvement(model, best_f)

    def weigh(self, acqf):
        """``acqf`` (a log acquisition) plus the log probability of feasibility."""

        return FeasibilityWeighted(acqf, self.models) if self.models else acqf


def feasibility(
    history: History,
    objective_targets: np.ndarray,
    fit: Callable[[int, np.ndarray, np.ndarray], Any],
) -> Feasibility | None:
    """The :class:`Feasibility` of a constrained ``history`` (``None`` without constraints).

    ``objective_targets`` are the objective model's training targets (transformed, negated: larger
    is better), one per history row; ``fit(k, rows, values)`` fits the method's GP to constraint
    ``k``'s ``values`` at the history's rows ``rows`` (an index array), with targets standardised
    by :func:`common.models.warpings.constraint_standardise` and negated.
    """
    if not history.constrained:
        return None
    feasible = history.feasible
    targets = np.asarray(objective_targets, dtype=float)
    best_f = float(targets[feasible].max()) if feasible.any() else None
    models = []
    for k in range(history.constraints.shape[1]):
        c = history.constraints[:, k]
        rows = np.flatnonzero(np.isfinite(c))
        if len(rows) < 2:
            continue
        threshold = constraint_threshold(c[rows])
        if not (c[rows] <= 0).any():
            # Never satisfied: the exact threshold lies far beyond the data, where the
            # probability's tail rewards uncertainty over progress; aim just past the best seen.
            threshold = min(threshold, float(-constraint_standardise(c[rows]).min()) + 0.5)
        models.append((fit(k, rows, c[rows]), threshold))
    return Feasibility(models, best_f)


class ZeroAcquisition(AcquisitionFunction):
    """A flat log acquisition: before a feasible trial, feasibility alone decides."""

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return X.new_zeros(X.shape[:-2])


MIN_FEASIBILITY = 0.5  # a candidate's required probability of feasibility (Gelbart et al., 2014)


LOG_MIN_FEASIBILITY = float(np.log(MIN_FEASIBILITY))


INELIGIBLE = -1e6  # below any log acquisition: where no candidate is eligible, feasibility decides


class FeasibilityWeighted(AcquisitionFunction):
    """``acqf(X) + log p(X)`` with ``p(X) = Π_k P(f_k(X) ≥ t_k)`` for ``models`` =
    ``[(f_k, t_k)]``, where ``p(X)`` reaches :data:`MIN_FEASIBILITY`: a log acquisition weighted by
    the probability of feasibility (:mod:`common.acquisition.feasibility`; ``f_k`` models a negated,
    standardised constraint, so larger is more feasible). Elsewhere ``INELIGIBLE + log p(X)``:
    below every eligible candidate, however small its log acquisition (log EI reaches −100 and
    less near well-known points), and ordered by the probability of feasibility, whose gradient
    leads a local search back to eligible ground."""

    def __init__(self, acqf: AcquisitionFunction, models: Sequence[tuple[Model, float]]) -> None:
        super().__init__(acqf.model)
        self.acqf = acqf
        self.constraint_models = torch.nn.ModuleList([m for m, _ in models])
        self.thresholds = [float(t) for _, t in models]

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        log_p = X.new_zeros(X.shape[:-2])
        for model, t in zip(self.constraint_models, self.thresholds, strict=True):
            posterior = model.posterior(X)
            mean = posterior.mean.reshape(X.shape[:-1]).sum(-1)
            std = posterior.variance.clamp_min(1e-12).sqrt().reshape(X.shape[:-1]).sum(-1)
            log_p = log_p + torch.special.log_ndtr((mean - t) / std)
        eligible = log_p >= LOG_MIN_FEASIBILITY
        return torch.where(eligible, self.acqf(X) + log_p, INELIGIBLE + log_p)
