"""Kernels on mixed inputs: categorical overlap kernels and CoCaBO's sum/product mixture.

Categorical columns hold choice indices; these kernels only compare them for equality.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from gpytorch.constraints import Interval
from gpytorch.kernels import Kernel, ScaleKernel
from gpytorch.priors import GammaPrior
from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior


def _matches(x1: torch.Tensor, x2: torch.Tensor, diag: bool) -> torch.Tensor:
    """Per-dimension equality indicators: ``(..., n, m, d)`` (or ``(..., n, d)`` on the diagonal)."""
    if diag:
        return (x1 == x2).to(x1.dtype)
    return (x1.unsqueeze(-2) == x2.unsqueeze(-3)).to(x1.dtype)


class OverlapKernel(Kernel):
    """CoCaBO's overlap kernel: the fraction of categorical coordinates that agree (Ru et al. 2020).

    ``k(h, h') = (1/d) Σ_i 1[h_i = h'_i]``, no ARD, values in [0, 1].
    """

    has_lengthscale = False

    def forward(self, x1, x2, diag: bool = False, last_dim_is_batch: bool = False, **params):
        return _matches(x1, x2, diag).mean(-1)


class MixtureKernel(Kernel):
    """CoCaBO's mixture ``(1 − λ)(k_h + k_x) + λ k_h k_x`` with λ ∈ [0, 1] learned (Ru et al. 2020, Eq 5.10).

    ``cat_kernel`` and ``cont_kernel`` select their own columns through ``active_dims``. λ = 0 gives the
    sum, λ = 1 the product of the two kernels.
    """

    def __init__(self, cat_kernel: Kernel, cont_kernel: Kernel, mix: float = 0.5, **kwargs):
        super().__init__(**kwargs)
        self.cat_kernel = cat_kernel
        self.cont_kernel = cont_kernel
        self.register_parameter("raw_mix", torch.nn.Parameter(torch.zeros(1)))
        self.register_constraint("raw_mix", Interval(0.0, 1.0))
        self.mix = mix

    @property
    def mix(self) -> torch.Tensor:
        return self.raw_mix_constraint.transform(self.raw_mix)

    @mix.setter
    def mix(self, value: float | torch.Tensor) -> None:
        value = torch.as_tensor(value, dtype=self.raw_mix.dtype, device=self.raw_mix.device)
        self.initialize(raw_mix=self.raw_mix_constraint.inverse_transform(value.reshape(1)))

    def forward(self, x1, x2, diag: bool = False, last_dim_is_batch: bool = False, **params):
        k_h = self.cat_kernel(x1, x2, diag=diag).to_dense()
        k_x = self.cont_kernel(x1, x2, diag=diag).to_dense()
        lam = self.mix
        return (1 - lam) * (k_h + k_x) + lam * k_h * k_x


def matern_kernel(cont_dims: Sequence[int]) -> Kernel:
    """Matérn-5/2 ARD on the continuous columns, with BoTorch's dimension-scaled lengthscale prior."""
    return get_covar_module_with_dim_scaled_prior(
        ard_num_dims=len(cont_dims), use_rbf_kernel=False, active_dims=list(cont_dims)
    )


def scaled(kernel: Kernel) -> ScaleKernel:
    """An output scale with a Gamma(2, 1) prior (mode 1: targets are standardised)."""
    return ScaleKernel(kernel, outputscale_prior=GammaPrior(2.0, 1.0))


def cocabo_kernel(cont_dims: Sequence[int], cat_dims: Sequence[int]) -> Kernel:
    """CoCaBO's kernel for a space: the mixture when both kinds exist, else the one that does."""
    if not cat_dims:
        return scaled(matern_kernel(cont_dims))
    overlap = OverlapKernel(active_dims=list(cat_dims))
    if not cont_dims:
        return scaled(overlap)
    return scaled(MixtureKernel(overlap, matern_kernel(cont_dims)))
