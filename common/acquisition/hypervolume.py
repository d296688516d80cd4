"""Multi-objective acquisition: the expected hypervolume improvement, in closed form and in logs.

With one independent GP per objective (each maximising its negated, warped objective), the
improvement of the dominated hypervolume that a candidate ``x`` with outcome ``y`` brings is the
volume of the part of the non-dominated region below ``y``. Cut that region into boxes
``[l_k, u_k]`` (BoTorch's box decomposition of the observed front up to a reference point), and
the improvement is ``Σ_k Π_j (min(y_j, u_kj) − l_kj)₊``. The objectives' posteriors are
independent, so each box's expectation factorises, and for ``Y ~ N(μ, σ²)``

    E[(min(Y, u) − l)₊] = σ (h((μ − l) / σ) − h((μ − u) / σ)),   h(z) = φ(z) + z Φ(z),

the expected improvement's own function (Emmerich, Giannakoglou and Naujoks, IEEE TEC 2006;
Yang et al., "Efficient computation of expected hypervolume improvement using box decomposition
algorithms", J. Glob. Optim. 2019). The acquisition is its logarithm, each factor computed from
``log h`` as log EI computes it (Ament et al., "Unexpected improvements to expected improvement
for Bayesian optimization", NeurIPS 2023) and the boxes summed by log-sum-exp: far from the front,
where the expectation underflows, the value and its gradient still rank candidates. It is exact
(no Monte Carlo samples, so no seed) and costs one posterior per objective per candidate.

The hypervolume is measured in the models' coordinates (each objective's warped target): a
monotone map of each objective keeps which points dominate which, so the front, and where it can
grow, are the study's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from botorch.acquisition import AcquisitionFunction
from botorch.acquisition.analytic import _log_ei_helper
from botorch.models.model import Model
from botorch.utils.multi_objective.box_decompositions.non_dominated import (
    FastNondominatedPartitioning,
)
from botorch.utils.safe_math import log1mexp
from scipy.special import log_ndtr

from common.acquisition.feasibility import ZeroAcquisition
from common.acquisition.functions import log_ei_helper
from common.acquisition.scalarization import non_dominated
from common.models.gp import DTYPE

REFERENCE_MARGIN = 0.1  # the reference lies this share of the observed span beyond the worst


def reference_point(targets: np.ndarray) -> np.ndarray:
    """The hypervolume's reference point for observed ``targets`` (maximised, ``(n, m)``): each
    objective's worst observed value less :data:`REFERENCE_MARGIN` of its observed span (of the
    value's size where all agree). From every observation, not from the front's own extent: a
    reference at the front's worst values would give no credit for extending the front past its
    ends, and the front would never grow there."""
    targets = np.asarray(targets, dtype=float)
    lo, hi = targets.min(axis=0), targets.max(axis=0)
    span = np.where(hi > lo, hi - lo, np.maximum(np.abs(lo), 1.0))
    return lo - REFERENCE_MARGIN * span


def hypercells(front: np.ndarray, reference: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """The boxes ``(lower, upper)`` (each ``(k, m)``, upper bounds may be +inf) that tile the region
    a new point can add to the hypervolume of ``front`` (maximised) above ``reference``."""
    Y = torch.as_tensor(np.asarray(front, dtype=float), dtype=DTYPE)
    ref = torch.as_tensor(np.asarray(reference, dtype=float), dtype=DTYPE)
    cells = FastNondominatedPartitioning(ref_point=ref, Y=Y).get_hypercell_bounds()
    return cells[0], cells[1]


class LogExpectedHypervolumeImprovement(AcquisitionFunction):
    """``log E[HVI(x)]`` of one candidate, from independent per-objective ``models`` (each
    maximised) over the boxes of :func:`hypercells` (see the module docstring). Candidates are
    ``(..., 1, d)``; values ``(...)``."""

    def __init__(self, models: Sequence[Model], lower: torch.Tensor, upper: torch.Tensor) -> None:
        super().__init__(models[0])
        self.models = list(models)
        self.lower, self.upper = lower, upper

    def _moments(self, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Each objective's posterior mean and standard deviation at ``X``, ``(..., m)``."""
        means, sigmas = [], []
        for model in self.models:
            fast = getattr(model, "mean_and_sigma", None)
            moments = None if fast is None else fast(X, 1e-12)
            if moments is None:
                posterior = model.posterior(X)
                mean = posterior.mean.squeeze(-2)
                moments = mean, posterior.variance.clamp_min(1e-12).sqrt().view(mean.shape)
            means.append(moments[0])
            sigmas.append(moments[1])
        return torch.cat(means, -1), torch.cat(sigmas, -1)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        mean, sigma = self._moments(X)  # (..., m)
        mean, sigma = mean.unsqueeze(-2), sigma.unsqueeze(-2)  # (..., 1, m) against (k, m) boxes
        bounded = torch.isfinite(self.upper)
        upper = torch.where(bounded, self.upper, self.lower)  # a finite stand-in where u = +inf
        log_h_lower = _log_ei_helper((mean - self.lower) / sigma)
        log_h_upper = _log_ei_helper((mean - upper) / sigma)
        # log(h(z_l) − h(z_u)) = log h(z_l) + log(1 − exp(log h(z_u) − log h(z_l))); h(−∞) = 0
        gap = (log_h_upper - log_h_lower).clamp_max(-1e-12)
        log_factor = log_h_lower + torch.where(bounded, log1mexp(gap), 0.0) + sigma.log()
        return torch.logsumexp(log_factor.sum(-1), dim=-1)

    def value_and_gradient(
        self, rows: np.ndarray, gradient: bool = True
    ) -> tuple[np.ndarray, np.ndarray | None] | None:
        """:meth:`forward` at ``rows`` (``(n, D)``) and, with ``gradient``, each row's gradient,
        in numpy from each model's moments (:meth:`common.models.gp.SharedTrainGP.moments`), as
        :meth:`common.acquisition.functions._LogEI.value_and_gradient` does for one model;
        ``None`` where a model has no numpy moments."""
        moments = [getattr(m, "moments", lambda: None)() for m in self.models]
        if any(m is None for m in moments):
            return None
        passes = [m.forward(rows) for m in moments]
        mean = np.stack([p[0] for p in passes], -1)[:, None, :]  # (n, 1, m)
        sigma = np.stack([p[1] for p in passes], -1)[:, None, :]
        lower, upper = self.lower.numpy(), self.upper.numpy()  # (k, m)
        bounded = np.isfinite(upper)
        z_l = (mean - lower) / sigma  # (n, k, m)
        z_u = (mean - np.where(bounded, upper, lower)) / sigma
        a, b = log_ei_helper(z_l), log_ei_helper(z_u)
        gap = np.minimum(b - a, -1e-12)
        r = np.where(bounded, np.exp(gap), 0.0)  # h(z_u) / h(z_l)
        log_factor = a + np.log1p(-r) + np.log(sigma)
        total = log_factor.sum(-1)  # (n, k)
        top = total.max(-1, keepdims=True)
        weights = np.exp(total - top)
        values = top[:, 0] + np.log(weights.sum(-1))
        if not gradient:
            return values, None
        share = (weights / weights.sum(-1, keepdims=True))[..., None]  # ∂ value / ∂ log_factor
        slope_l = np.exp(log_ndtr(z_l) - a)  # ∂ log h / ∂z, as _LogH's backward
        slope_u = np.where(bounded, np.exp(log_ndtr(z_u) - b), 0.0)
        scale = 1.0 / ((1.0 - r) * sigma)
        g_mean = (share * (slope_l - r * slope_u) * scale).sum(1)  # (n, m)
        g_sigma = (share * ((r * slope_u * z_u - slope_l * z_l) * scale + 1.0 / sigma)).sum(1)
        grad = sum(
            m.backward(p[2], g_mean[:, j], g_sigma[:, j])
            for j, (m, p) in enumerate(zip(moments, passes, strict=True))
        )
        return values, grad


def log_hypervolume_improvement(
    models: Sequence[Model], targets: np.ndarray
) -> LogExpectedHypervolumeImprovement:
    """:class:`LogExpectedHypervolumeImprovement` over the front of ``targets`` (the observed
    points in the models' maximised coordinates, ``(n, m)``, at least one)."""
    targets = np.asarray(targets, dtype=float)
    front = targets[non_dominated(-targets)]
    lower, upper = hypercells(front, reference_point(targets))
    return LogExpectedHypervolumeImprovement(models, lower, upper)


@dataclass
class ObjectiveModels:
    """A multi-objective study's GPs, one per objective on the same rows, and which of those rows
    the front is made of (the feasible ones in a constrained study)."""

    models: list[Model]
    front_rows: np.ndarray  # (n,) bool

    def acquisition(
        self, busy_rows: np.ndarray | None = None, believe: bool = False
    ) -> AcquisitionFunction:
        """Log EHVI over the front of the observed targets; with ``believe``, over the front with
        the ``busy_rows``' posterior means added and each model conditioned on them (the Kriging
        believer, the pending-point policy ``"kriging_believer"``). Before a front exists (no
        feasible row) a flat zero, so that feasibility alone decides."""
        models = self.models
        targets = np.stack([m.train_targets.detach().numpy() for m in models], axis=1)
        targets = targets[np.asarray(self.front_rows, bool)]
        if believe and busy_rows is not None and len(busy_rows):
            X = torch.as_tensor(np.asarray(busy_rows, dtype=float), dtype=DTYPE)
            with torch.no_grad():  # a joint posterior: gpytorch's caches, which fantasies need
                means = [m.posterior(X).mean.reshape(-1, 1) for m in models]
            models = [m.condition_on_observations(X, y) for m, y in zip(models, means, strict=True)]
            targets = np.vstack([targets, torch.cat(means, 1).numpy()])
        if not len(targets):
            return ZeroAcquisition(models[0])
        return log_hypervolume_improvement(models, targets)
