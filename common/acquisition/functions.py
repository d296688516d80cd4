"""Acquisition functions and their maximisation over the continuous columns with the rest fixed.

The GP models ``−y`` (see :mod:`common.models.gp`), so every acquisition here is maximised.
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

from common.models.gp import DTYPE

EVALUATION_BATCH = 2048  # rows per torch call when an acquisition has no numpy pass


class _OnModelDevice:
    """An analytic acquisition that takes the model's device and dtype as they are.

    BoTorch's analytic acquisitions move the whole module to the candidates' device and dtype on
    every call (``self.to(X)``), a walk over every sub-module that costs as much as a posterior at
    a hundred observations; here models and candidates are always float64 on the CPU.
    """

    def _mean_and_sigma(self, X, compute_sigma: bool = True, min_var: float = 1e-12):
        fast = getattr(self.model, "mean_and_sigma", None)
        if fast is not None and self.posterior_transform is None:
            moments = fast(X, min_var)  # one autograd node (common.models.predictive)
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
        ``None`` where the model has no numpy moments
        (:meth:`common.models.gp.SharedTrainGP.moments`)."""
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
    """Acquisition values of the rows of ``X``, no gradients: by the acquisition's own numpy
    pass where it has one, else through torch in batches of :data:`EVALUATION_BATCH` rows (a
    pool of many thousand rows stays within memory); NaN becomes −inf, never a maximiser."""
    X = np.asarray(X, dtype=float)
    fast = getattr(acqf, "value_and_gradient", None)
    out = None if fast is None else fast(X, gradient=False)
    if out is not None:
        values = out[0]
    else:
        values = np.empty(len(X))
        with torch.no_grad():
            for i in range(0, len(X), EVALUATION_BATCH):
                chunk = torch.as_tensor(X[i : i + EVALUATION_BATCH], dtype=DTYPE)[:, None, :]
                values[i : i + EVALUATION_BATCH] = acqf(chunk).numpy()
    return np.where(np.isnan(values), -np.inf, values)


def value_and_gradient(
    acqf: AcquisitionFunction, X: np.ndarray, cols: Sequence[int] | np.ndarray
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


class CanonicalInputs(AcquisitionFunction):
    """``acqf`` evaluated at canonical rows: entries that ``active(rows)`` marks unused are set to
    ``impute`` first (:mod:`common.space.conditions`), so the acquisition is flat along parameters a
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
