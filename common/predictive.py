"""A GP's posterior mean and standard deviation at separate candidates, with a hand-written
backward pass.

What every analytic acquisition here needs, ``μ(x) = m + k(x, X) α`` and
``σ(x) = √max(k(x, x) − ‖L⁻¹ k(X, x)‖², v_min)`` (Rasmussen and Williams 2006, Eq 2.25–2.26),
computed in numpy from the model's cached Cholesky factor ``L`` and weights ``α`` as one
autograd node instead of the dozen a posterior object records. Its gradient in the candidates
follows from ``∂μ/∂k = α`` and ``∂σ²/∂k = −2 K̂⁻¹ k``, passed to the kernel's own backward
(:mod:`common.cross_kernel`).

>>> mean, sigma = mean_and_sigma(x, cross, L, alpha, constant)
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.linalg import lapack

from common.cross_kernel import CrossKernel


def mean_and_sigma(
    x: torch.Tensor,
    cross: CrossKernel,
    L: torch.Tensor,
    alpha: torch.Tensor,
    constant: float,
    min_var: float = 1e-12,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(μ, σ)`` at the rows of ``x`` (``(..., D)``), each of shape ``x.shape[:-1]``;
    differentiable in ``x``."""
    flat = x.reshape(-1, x.shape[-1])
    args = (cross, L.detach().numpy(), alpha.detach().numpy(), constant, min_var)
    mean, sigma = _MeanSigma.apply(flat, args)
    return mean.reshape(x.shape[:-1]), sigma.reshape(x.shape[:-1])


class _MeanSigma(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, args):
        cross, L, alpha, constant, min_var = args
        rows = x.detach().numpy()
        K, saved = cross.part.forward(rows)
        V, info = lapack.dtrtrs(L, np.ascontiguousarray(K.T), lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("singular Cholesky factor")
        mean = constant + K @ alpha
        variance = cross.part.diag(rows) - np.einsum("ij,ij->j", V, V)
        sigma = np.sqrt(np.maximum(variance, min_var))
        ctx.args, ctx.saved, ctx.shape = args, saved, x.shape
        ctx.V, ctx.sigma, ctx.clamped = V, sigma, variance < min_var
        return torch.from_numpy(mean), torch.from_numpy(sigma)

    @staticmethod
    def backward(ctx, g_mean: torch.Tensor | None, g_sigma: torch.Tensor | None):
        cross, L, alpha, *_ = ctx.args
        m = ctx.shape[0]
        G = np.zeros((m, len(alpha)))
        if g_mean is not None:
            G += g_mean.detach().numpy()[:, None] * alpha[None, :]
        if g_sigma is not None:
            g_var = np.where(ctx.clamped, 0.0, g_sigma.detach().numpy() / (2.0 * ctx.sigma))
            K_inv_k, _ = lapack.dtrtrs(L, ctx.V, lower=1, trans=1)  # K̂⁻¹ k(X, x), (n, m)
            G -= 2.0 * g_var[:, None] * K_inv_k.T
        grad = np.zeros(ctx.shape)
        if cross.part.smooth:
            cross.part.backward(G, ctx.saved, grad)
        return torch.from_numpy(grad), None
