"""Acquisition functions and their maximisation over the continuous columns with the rest fixed.

The GP models ``−y`` (see :mod:`common.gp`), so every acquisition here is maximised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from botorch.acquisition import (
    AcquisitionFunction,
    LogExpectedImprovement,
    UpperConfidenceBound,
)
from botorch.models.model import Model

from common.gp import DTYPE

FAILED_ASCENT = 1e300  # the loss where an acquisition is not finite: the line search backs off


def ascend(
    acqf: AcquisitionFunction,
    starts: np.ndarray,
    cols: Sequence[int],
    lower: np.ndarray,
    upper: np.ndarray,
    maxiter: int,
) -> tuple[np.ndarray, np.ndarray]:
    """At most ``maxiter`` L-BFGS-B iterations on columns ``cols`` of every row of ``starts``
    within ``[lower, upper]`` (per column of ``cols``), each row's other columns fixed; returns
    the rows and their acquisition values.

    The rows are independent problems solved as one: the sum of their acquisitions has each row's
    own gradient in that row's variables, so one scipy run moves them all with one batched
    acquisition call per evaluation (BoTorch's ``gen_candidates_scipy`` runs one L-BFGS-B per row
    in lockstep, but limits BLAS threads on every call through threadpoolctl, whose library scan
    costs about 1 ms a call, a fifth of one of BO-FM's short ascents).
    """
    from scipy.optimize import minimize

    starts = np.asarray(starts, dtype=float)
    cols = np.asarray(cols, dtype=int)
    n, k = len(starts), len(cols)
    X = starts.copy()

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        X[:, cols] = flat.reshape(n, k)
        values, grad = value_and_gradient(acqf, X, cols)
        total = float(torch.from_numpy(values).sum())  # torch's sum, as before the numpy pass
        if not np.isfinite(total):
            return FAILED_ASCENT, np.zeros_like(flat)
        return -total, -grad.reshape(-1)

    x0 = np.clip(starts[:, cols], lower, upper).reshape(-1)
    bounds = list(zip(np.tile(lower, n), np.tile(upper, n), strict=True))
    result = minimize(
        loss, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": maxiter}
    )
    rows = starts.copy()
    rows[:, cols] = np.clip(result.x.reshape(n, k), lower, upper)
    return rows, evaluate(acqf, rows)


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

    def value_and_gradient(
        self, rows: np.ndarray, gradient: bool = True
    ) -> tuple[np.ndarray, np.ndarray | None] | None:
        """:meth:`forward` at ``rows`` (``(m, D)``) and, with ``gradient``, each row's gradient
        (``(m, D)``), in numpy without autograd: the same operations as the forward pass and its
        backward, so the same numbers, at a fraction of the cost for a handful of rows.
        ``None`` where the model has no numpy moments (:meth:`common.gp.SharedTrainGP.moments`)."""
        moments = getattr(self.model, "moments", None)
        if not self.maximize or self.posterior_transform is not None or moments is None:
            return None
        moments = moments()
        if moments is None:
            return None
        mean, sigma, saved = moments.forward(rows)
        u = (mean - self.best_f.detach().numpy()) / sigma
        log_h = log_ei_helper(u)
        values = log_h + torch.from_numpy(sigma).log().numpy()  # torch's log, to the last bit
        if not gradient:
            return values, None
        from scipy.special import log_ndtr

        slope = np.exp(log_ndtr(u) - log_h)  # ∂ log h / ∂u, as _LogH's backward
        g_sigma = -slope * (u / sigma) + 1.0 / sigma  # through u = (μ − f*) / σ, and log σ
        return values, moments.backward(saved, slope / sigma, g_sigma)


class _LogH(torch.autograd.Function):
    """``log h(u)``, ``h(u) = φ(u) + u Φ(u)``, as BoTorch's stable ``_log_ei_helper`` computes
    it (Ament et al. 2023), in numpy; its derivative ``h'(u) / h(u) = Φ(u) / h(u)`` is taken in
    log space, so it stays accurate far below the incumbent, where both vanish."""

    @staticmethod
    def forward(ctx, u: torch.Tensor) -> torch.Tensor:
        values = u.detach().numpy()
        log_h = log_ei_helper(values)
        ctx.values, ctx.log_h = values, log_h
        return torch.from_numpy(log_h)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        from scipy.special import log_ndtr

        return grad * torch.from_numpy(np.exp(log_ndtr(ctx.values) - ctx.log_h))


LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
LOG_SQRT_PI_DIV_2 = 0.5 * np.log(np.pi / 2.0)


def log_ei_helper(u: np.ndarray) -> np.ndarray:
    """BoTorch's ``_log_ei_helper`` in numpy: ``log(φ(u) + u Φ(u))`` directly above ``u = −1``;
    below, ``log φ(u) + log(1 − exp(w))`` with ``w = log(|u| Φ(u) / φ(u))`` from the scaled
    complementary error function, and the leading term ``−2 log |u|`` past ``u = −10⁶``."""
    from scipy.special import erfcx, ndtr

    u = np.asarray(u, dtype=float)
    out = np.empty_like(u)
    upper = u > -1.0
    top = u[upper]
    out[upper] = np.log(np.exp(-0.5 * top * top - LOG_SQRT_2PI) + top * ndtr(top))
    low = u[~upper]
    log_phi = -0.5 * low * low - LOG_SQRT_2PI
    far = low <= -1e6
    moderate = np.where(far, -1.0, low)
    with np.errstate(divide="ignore"):
        w = np.log(erfcx(-moderate / np.sqrt(2.0)) * np.abs(moderate)) + LOG_SQRT_PI_DIV_2
        log1mexp = np.where(
            w > -np.log(2.0), np.log(-np.expm1(w)), np.log1p(-np.exp(np.minimum(w, 0.0)))
        )
    out[~upper] = log_phi + np.where(far, -2.0 * np.log(np.abs(low)), log1mexp)
    return out


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
    fast = getattr(acqf, "value_and_gradient", None)
    out = None if fast is None else fast(np.asarray(X, dtype=float), gradient=False)
    if out is not None:
        return out[0]
    with torch.no_grad():
        return acqf(torch.as_tensor(X, dtype=DTYPE)[:, None, :]).numpy().astype(float)


def value_and_gradient(
    acqf: AcquisitionFunction, X: np.ndarray, cols: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Acquisition values of the rows of ``X`` and each row's gradient in its columns ``cols``
    (``(m, len(cols))``): by the acquisition's own numpy pass where it has one
    (:meth:`_LogEI.value_and_gradient`), else by autograd. Rows are separate candidates, so the
    gradient of their sum is each row's own."""
    X = np.asarray(X, dtype=float)
    cols = np.asarray(cols, dtype=int)
    fast = getattr(acqf, "value_and_gradient", None)
    out = None if fast is None else fast(X)
    if out is not None:
        return out[0], out[1][:, cols]
    base = torch.as_tensor(X, dtype=DTYPE)
    index = torch.as_tensor(cols)
    free = base[:, index].clone().requires_grad_(True)
    values = acqf(base.index_copy(1, index, free)[:, None, :])
    if not torch.isfinite(values).all():
        return values.detach().numpy(), np.zeros((len(X), len(cols)))
    (grad,) = torch.autograd.grad(values.sum(), free)
    return values.detach().numpy(), grad.numpy()


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
    L-BFGS-B (:func:`ascend`). ``snap`` (e.g. :meth:`MixedSpace.round`) puts rows on the space's
    grid (integers, steps): the refined rows are snapped and scored again, so the value returned is
    that of the configuration that will run, not of its continuous relaxation. ``exclude`` (e.g.
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
    try:
        cands_np, vals_np = ascend(acqf, starts, cont, lo, hi, maxiter=100)
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
