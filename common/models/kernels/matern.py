"""Matérn-5/2 on the continuous columns (BoTorch's dimension-scaled prior), with its fast forms:
``r² = Σ_j (x_j − x'_j)² / ℓ_j²``, ``∂k/∂ℓ_j`` and ``∂k/∂x_j`` in closed form."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior
from gpytorch.kernels import Kernel, MaternKernel

from common.models.kernels.fast_forms import (
    SQRT5,
    CrossPart,
    MAPParameter,
    MAPTerm,
    SquaredDistances,
    Unsupported,
    register,
)


def matern_kernel(cont_dims: Sequence[int]) -> Kernel:
    """Matérn-5/2 ARD on the continuous columns, BoTorch's dimension-scaled lengthscale prior."""
    return get_covar_module_with_dim_scaled_prior(
        ard_num_dims=len(cont_dims), use_rbf_kernel=False, active_dims=list(cont_dims)
    )


# ---------------------------------------------------------------------- fast forms
class _Matern52Term(MAPTerm):
    """Matérn-5/2 of ``r² = Σ_j (x_j − x'_j)² / ℓ_j²``; ``∂k/∂ℓ_j = (5/3)(1 + √5 r) e^{−√5 r}
    (x_j − x'_j)² / ℓ_j³``."""

    def __init__(self, X: np.ndarray, lengthscale: MAPParameter) -> None:
        self.D = SquaredDistances(X)
        self.lengthscale = lengthscale

    def forward(self) -> np.ndarray:
        ls = np.broadcast_to(self.lengthscale.value(), (len(self.D),))
        self.inv_sq = 1.0 / ls**2
        r = np.sqrt(self.D.combined(self.inv_sq))
        self.e = np.exp(-SQRT5 * r)
        self.r = r
        return (1.0 + SQRT5 * r + (5.0 / 3.0) * r * r) * self.e

    def backward(self, G: np.ndarray) -> None:
        weight = G * ((5.0 / 3.0) * (1.0 + SQRT5 * self.r) * self.e)
        per_dim = self.D.weighted(weight) * self.inv_sq**1.5
        if self.lengthscale.raw.size == 1:
            per_dim = per_dim.sum(keepdims=True)
        self.lengthscale.add_value_grad(per_dim.reshape(self.lengthscale.raw.shape))


class _Matern52Part(CrossPart):
    smooth = True

    def __init__(self, X: np.ndarray, dims: np.ndarray, lengthscale: np.ndarray) -> None:
        self.dims = dims
        self.inv = 1.0 / np.broadcast_to(lengthscale, (len(dims),))
        self.Z = X[:, dims] * self.inv  # training rows in lengthscale units
        self.Z_sq = (self.Z * self.Z).sum(1)

    def forward(self, x):
        z = x[:, self.dims] * self.inv
        r2 = (z * z).sum(1)[:, None] + self.Z_sq[None, :] - 2.0 * (z @ self.Z.T)
        r = np.sqrt(np.maximum(r2, 0.0))
        e = np.exp(-SQRT5 * r)
        return (1.0 + SQRT5 * r + (5.0 / 3.0) * r2.clip(0.0)) * e, (z, r, e)

    def backward(self, G, saved, grad):
        z, r, e = saved
        W = G * ((5.0 / 3.0) * (1.0 + SQRT5 * r) * e)  # Σ_i W_i (z − Z_i) is −∂/∂z
        dz = -(W.sum(1)[:, None] * z - W @ self.Z)
        grad[:, self.dims] += dz * self.inv

    def diag(self, x):
        return np.ones(len(x))


def _map_term(kernel, X, path: str, fit) -> MAPTerm:
    if kernel.nu != 2.5 or kernel.batch_shape != torch.Size([]):
        raise Unsupported
    return _Matern52Term(X, fit.own(path, "raw_lengthscale"))


def _cross_part(kernel, X, dims, part_of) -> CrossPart | None:
    if kernel.nu != 2.5 or kernel.batch_shape:
        return None
    return _Matern52Part(X, dims, kernel.lengthscale.detach().numpy().reshape(-1))


register(MaternKernel, map_term=_map_term, cross_part=_cross_part)
