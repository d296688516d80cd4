"""Acquisition functions and their maximisation over the continuous columns with the rest fixed.

The GP models ``−y`` (see :mod:`common.gp`), so every acquisition here is maximised.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import torch
from botorch.acquisition import (
    AcquisitionFunction,
    LogExpectedImprovement,
    UpperConfidenceBound,
)
from botorch.exceptions.warnings import OptimizationWarning
from botorch.generation.gen import gen_candidates_scipy
from botorch.models.model import Model

from common.gp import DTYPE


def generate_candidates(*args, **kwargs):
    """BoTorch's ``gen_candidates_scipy`` without its "line search ABNORMAL" warnings.

    A stopped line search is routine in a few-iteration acquisition ascent, not news to the user;
    BoTorch forces the warning with an ``"always"`` filter, so it is caught here and every other
    warning passed on.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = gen_candidates_scipy(*args, **kwargs)
    for w in caught:
        if not issubclass(w.category, OptimizationWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return out


class _OnModelDevice:
    """An analytic acquisition that takes the model's device and dtype as they are.

    BoTorch's analytic acquisitions move the whole module to the candidates' device and dtype on
    every call (``self.to(X)``), a walk over every sub-module that costs as much as a posterior at
    a hundred observations; here models and candidates are always float64 on the CPU.
    """

    def _mean_and_sigma(self, X, compute_sigma: bool = True, min_var: float = 1e-12):
        fast = getattr(self.model, "mean_and_sigma", None)
        if fast is not None and self.posterior_transform is None:
            moments = fast(X, min_var)  # one autograd node (common.predictive)
            if moments is not None:
                return moments[0], moments[1] if compute_sigma else None
        posterior = self.model.posterior(X=X, posterior_transform=self.posterior_transform)
        mean = posterior.mean.squeeze(-2)
        if not compute_sigma:
            return mean, None
        return mean, posterior.variance.clamp_min(min_var).sqrt().view(mean.shape)


class _LogEI(_OnModelDevice, LogExpectedImprovement):
    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """``log h(u) + log σ``, ``u = (μ − best_f) / σ`` (BoTorch's value), with ``log h`` as
        one autograd node (:class:`_LogH`) where the model has the fast moments."""
        if X.dim() < 3 or X.shape[-2] != 1 or not self.maximize:
            return super().forward(X)
        mean, sigma = self._mean_and_sigma(X)
        u = (mean - self.best_f) / sigma
        return (_LogH.apply(u) + sigma.log()).squeeze(-1)


class _LogH(torch.autograd.Function):
    """``log h(u)``, ``h(u) = φ(u) + u Φ(u)``, by BoTorch's stable ``_log_ei_helper``; its
    derivative ``h'(u) / h(u) = Φ(u) / h(u)`` is taken in log space, so it stays accurate far
    below the incumbent, where both vanish (Ament et al. 2023)."""

    @staticmethod
    def forward(ctx, u: torch.Tensor) -> torch.Tensor:
        from botorch.acquisition.analytic import _log_ei_helper

        log_h = _log_ei_helper(u.detach())
        ctx.save_for_backward(u.detach(), log_h)
        return log_h

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        u, log_h = ctx.saved_tensors
        return grad * torch.exp(torch.special.log_ndtr(u) - log_h)


class _UCB(_OnModelDevice, UpperConfidenceBound):
    pass


def upper_confidence_bound(model: Model, kappa: float = 2.0) -> AcquisitionFunction:
    """GP-UCB ``μ + κσ`` (CoCaBO uses κ = 2)."""
    return _UCB(model, beta=kappa**2)


def log_expected_improvement(model: Model, best_f: float | torch.Tensor) -> AcquisitionFunction:
    """Log expected improvement over ``best_f`` (Ament et al. 2023), BoTorch's."""
    return _LogEI(model, best_f=best_f)


def evaluate(acqf: AcquisitionFunction, X: np.ndarray) -> np.ndarray:
    """Acquisition values of the rows of ``X`` (one batched call, no gradients)."""
    with torch.no_grad():
        return acqf(torch.as_tensor(X, dtype=DTYPE)[:, None, :]).numpy().astype(float)


def maximize_continuous(
    acqf: AcquisitionFunction,
    template: np.ndarray,
    cont_dims: Sequence[int],
    rng: np.random.Generator,
    *,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    n_raw: int = 512,
    n_starts: int = 4,
    extra_starts: np.ndarray | None = None,
    snap: Callable[[np.ndarray], np.ndarray] | None = None,
    exclude: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, float]:
    """Maximise ``acqf`` over ``cont_dims`` in ``[lower, upper]``, other columns as ``template``.

    Multi-start gradient optimisation: ``n_raw`` uniform candidates (plus ``extra_starts``, rows of
    continuous values) are scored in one batch, and the best ``n_starts`` are refined together by
    L-BFGS-B. ``snap`` (e.g. :meth:`MixedSpace.round`) puts rows on the space's grid (integers,
    steps): the refined rows are snapped and scored again, so the value returned is that of the
    configuration that will run, not of its continuous relaxation. ``exclude`` (e.g.
    :meth:`common.configset.ConfigSet.contains`) marks rows that must not be returned, such as
    configurations already observed: the best refined or raw row it does not mark is returned
    (with integers, the optimum often snaps onto an observed row). Returns the best full row and
    its acquisition value (the best row overall if ``exclude`` marks every one).
    """
    cont = np.asarray(cont_dims, dtype=int)
    template = np.asarray(template, dtype=float)
    if cont.size == 0:
        return template.copy(), float(evaluate(acqf, template[None])[0])
    lo = np.zeros(cont.size) if lower is None else np.asarray(lower, dtype=float)
    hi = np.ones(cont.size) if upper is None else np.asarray(upper, dtype=float)
    raw = lo + rng.random((n_raw, cont.size)) * (hi - lo)
    if extra_starts is not None and len(extra_starts):
        raw = np.vstack([np.clip(np.asarray(extra_starts, dtype=float), lo, hi), raw])
    X = np.repeat(template[None], len(raw), axis=0)
    X[:, cont] = raw
    if snap is not None:
        X = snap(X)
    scores = evaluate(acqf, X)
    starts = X[np.argsort(-scores)[:n_starts]]
    full_lo = torch.as_tensor(template, dtype=DTYPE).clone()
    full_hi = full_lo.clone()
    full_lo[cont] = torch.as_tensor(lo, dtype=DTYPE)
    full_hi[cont] = torch.as_tensor(hi, dtype=DTYPE)
    fixed = {int(j): float(template[j]) for j in range(len(template)) if j not in set(cont)}
    try:
        cands, vals = generate_candidates(
            torch.as_tensor(starts, dtype=DTYPE)[:, None, :],
            acqf,
            lower_bounds=full_lo,
            upper_bounds=full_hi,
            fixed_features=fixed or None,
            options={"maxiter": 100},
        )
        cands_np = cands.detach().numpy()[:, 0, :]
        vals_np = vals.detach().numpy().reshape(-1)
    except Exception:  # the raw scores still give a sensible point
        cands_np, vals_np = starts, np.sort(scores)[::-1][: len(starts)]
    if snap is not None:
        cands_np = snap(cands_np)
        vals_np = evaluate(acqf, cands_np)
    rows, values = np.vstack([cands_np, X]), np.concatenate([vals_np, scores])
    if exclude is not None:
        allowed = ~np.asarray(exclude(rows), dtype=bool)
        if allowed.any():
            values = np.where(allowed, values, -np.inf)
    best = int(np.argmax(values))  # refined rows first: a tie keeps the refined one
    return rows[best], float(values[best])


class CanonicalInputs(AcquisitionFunction):
    """``acqf`` evaluated at canonical rows: entries that ``active(rows)`` marks unused are set to
    ``impute`` first (:mod:`common.conditional`), so the acquisition is flat along parameters a
    candidate does not use. Gradients flow through the used entries only."""

    def __init__(
        self,
        acqf: AcquisitionFunction,
        active: Callable[[np.ndarray], np.ndarray],
        impute: np.ndarray,
    ) -> None:
        super().__init__(acqf.model)
        self.acqf = acqf
        self._active = active
        self._impute = torch.as_tensor(np.asarray(impute, dtype=float), dtype=DTYPE)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        rows = X.detach().reshape(-1, X.shape[-1]).cpu().numpy()
        mask = torch.as_tensor(self._active(rows)).reshape(X.shape)
        return self.acqf(torch.where(mask, X, self._impute.to(X).expand_as(X)))


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
    the probability of feasibility (:mod:`common.constraints`; ``f_k`` models a negated,
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
