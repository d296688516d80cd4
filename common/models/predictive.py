"""A GP's posterior mean and standard deviation at separate candidates, with a hand-written
backward pass.

What every analytic acquisition here needs, ``μ(x) = m + k(x, X) α`` and
``σ(x) = √max(k(x, x) − ‖L⁻¹ k(X, x)‖², v_min)`` (Rasmussen and Williams 2006, Eq 2.25–2.26),
computed in numpy from the model's cached Cholesky factor ``L`` and weights ``α`` as one
autograd node instead of the dozen a posterior object records. Its gradient in the candidates
follows from ``∂μ/∂k = α`` and ``∂σ²/∂k = −2 K̂⁻¹ k``, passed to the kernel's own backward
(:mod:`common.models.cross_covariance`).

>>> moments = Moments(cross, L, alpha, constant)
>>> mean, sigma = mean_and_sigma(x, moments)
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.linalg import lapack

from common.models.cross_covariance import CrossKernel


class Moments:
    """``μ`` and ``σ`` of one fitted model at candidate rows, in numpy, and their backward pass:
    what :func:`mean_and_sigma` records as one autograd node, and what an acquisition's own
    numpy gradient (:func:`common.acquisition.functions.value_and_gradient`) calls without
    autograd."""

    def __init__(
        self,
        cross: CrossKernel,
        L: np.ndarray,
        alpha: np.ndarray,
        constant: float,
        min_var: float = 1e-12,
    ) -> None:
        self.cross, self.L, self.alpha = cross, L, alpha
        self.constant, self.min_var = constant, min_var

    def forward(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple]:
        """``(μ, σ, saved)`` at ``rows`` (``(m, D)``); ``saved`` is what :meth:`backward` needs."""
        K, kernel_saved = self.cross.part.forward(rows)
        # Kᵀ of a row-major K is already the column-major right-hand side LAPACK takes: no copy
        V, info = lapack.dtrtrs(self.L, np.asfortranarray(K.T), lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("singular Cholesky factor")
        mean = self.constant + K @ self.alpha
        variance = self.cross.part.diag(rows) - np.einsum("ij,ij->j", V, V)
        sigma = np.sqrt(np.maximum(variance, self.min_var))
        return mean, sigma, (rows.shape, kernel_saved, V, sigma, variance < self.min_var)

    def backward(
        self, saved: tuple, g_mean: np.ndarray | None, g_sigma: np.ndarray | None
    ) -> np.ndarray:
        """``Σ_i g_mean_i ∂μ_i/∂x + g_sigma_i ∂σ_i/∂x`` for every row and column, ``(m, D)``."""
        shape, kernel_saved, V, sigma, clamped = saved
        G = np.zeros((shape[0], len(self.alpha)))
        if g_mean is not None:
            G += g_mean[:, None] * self.alpha[None, :]
        if g_sigma is not None:
            g_var = np.where(clamped, 0.0, g_sigma / (2.0 * sigma))
            K_inv_k, _ = lapack.dtrtrs(self.L, V, lower=1, trans=1)  # K̂⁻¹ k(X, x), (n, m)
            G -= 2.0 * g_var[:, None] * K_inv_k.T
        grad = np.zeros(shape)
        if self.cross.part.smooth:
            self.cross.part.backward(G, kernel_saved, grad)
        return grad


def mean_and_sigma(x: torch.Tensor, moments: Moments) -> tuple[torch.Tensor, torch.Tensor]:
    """``(μ, σ)`` at the rows of ``x`` (``(..., D)``), each of shape ``x.shape[:-1]``;
    differentiable in ``x``."""
    flat = x.reshape(-1, x.shape[-1])
    mean, sigma = _MeanSigma.apply(flat, moments)
    return mean.reshape(x.shape[:-1]), sigma.reshape(x.shape[:-1])


class _MeanSigma(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, moments: Moments):
        mean, sigma, saved = moments.forward(x.detach().numpy())
        ctx.moments, ctx.saved = moments, saved
        return torch.from_numpy(mean), torch.from_numpy(sigma)

    @staticmethod
    def backward(ctx, g_mean: torch.Tensor | None, g_sigma: torch.Tensor | None):
        grad = ctx.moments.backward(
            ctx.saved,
            None if g_mean is None else g_mean.detach().numpy(),
            None if g_sigma is None else g_sigma.detach().numpy(),
        )
        return torch.from_numpy(grad), None
