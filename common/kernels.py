"""Kernels on mixed inputs: categorical overlap kernels and CoCaBO's sum/product mixture.

Categorical columns hold choice indices; these kernels only compare them for equality.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior
from gpytorch.constraints import Interval
from gpytorch.kernels import Kernel, ScaleKernel
from gpytorch.priors import GammaPrior, NormalPrior


def _matches(x1: torch.Tensor, x2: torch.Tensor, diag: bool) -> torch.Tensor:
    """Per-dimension equality indicators, ``(..., n, m, d)`` (``(..., n, d)`` on the diagonal)."""
    if diag:
        return (x1 == x2).to(x1.dtype)
    return (x1.unsqueeze(-2) == x2.unsqueeze(-3)).to(x1.dtype)


def kernel_matrix(kernel: Kernel, x1: torch.Tensor, x2: torch.Tensor, diag: bool = False):
    """``kernel(x1, x2)`` as a dense tensor, through ``forward`` on the kernel's active columns.

    What gpytorch's ``Kernel.__call__`` computes, without its lazy wrapper and checks: at a hundred
    training rows these cost as much as the kernel's arithmetic, on every evaluation of a fit's
    objective and of an acquisition.
    """
    if kernel.active_dims is not None:
        x1 = x1.index_select(-1, kernel.active_dims)
        x2 = x2.index_select(-1, kernel.active_dims)
    out = kernel.forward(x1, x2, diag=diag)
    return out if isinstance(out, torch.Tensor) else out.to_dense()


class OverlapKernel(Kernel):
    """CoCaBO's overlap kernel: the fraction of categorical coordinates that agree (Ru et al. 2020).

    ``k(h, h') = (1/d) Σ_i 1[h_i = h'_i]``, no ARD, values in [0, 1].
    """

    has_lengthscale = False
    is_stationary = True  # k(h, h) = 1 for every h

    def forward(self, x1, x2, diag: bool = False, last_dim_is_batch: bool = False, **params):
        return _matches(x1, x2, diag).mean(-1)


class MixtureKernel(Kernel):
    """CoCaBO's mixture ``(1 − λ)(k_h + k_x) + λ k_h k_x``, λ ∈ [0, 1] learned (Ru et al., Eq 5.10).

    ``cat_kernel`` and ``cont_kernel`` select their own columns through ``active_dims``. λ = 0 gives
    the sum, λ = 1 the product of the two kernels.
    """

    def __init__(self, cat_kernel: Kernel, cont_kernel: Kernel, mix: float = 0.5, **kwargs):
        super().__init__(**kwargs)
        self.cat_kernel = cat_kernel
        self.cont_kernel = cont_kernel
        self.register_parameter("raw_mix", torch.nn.Parameter(torch.zeros(1)))
        self.register_constraint("raw_mix", Interval(0.0, 1.0))
        self.mix = mix

    @property
    def is_stationary(self) -> bool:
        return self.cat_kernel.is_stationary and self.cont_kernel.is_stationary

    @property
    def mix(self) -> torch.Tensor:
        return self.raw_mix_constraint.transform(self.raw_mix)

    @mix.setter
    def mix(self, value: float | torch.Tensor) -> None:
        value = torch.as_tensor(value, dtype=self.raw_mix.dtype, device=self.raw_mix.device)
        self.initialize(raw_mix=self.raw_mix_constraint.inverse_transform(value.reshape(1)))

    def forward(self, x1, x2, diag: bool = False, last_dim_is_batch: bool = False, **params):
        k_h = kernel_matrix(self.cat_kernel, x1, x2, diag)
        k_x = kernel_matrix(self.cont_kernel, x1, x2, diag)
        lam = self.mix
        return (1 - lam) * (k_h + k_x) + lam * k_h * k_x


def matern_kernel(cont_dims: Sequence[int]) -> Kernel:
    """Matérn-5/2 ARD on the continuous columns, BoTorch's dimension-scaled lengthscale prior."""
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


OVERLAP_FORMS = ("code", "paper")


class TransformedOverlapKernel(Kernel):
    """CASMOPOLITAN's transformed overlap kernel with ARD weights (Wan et al. 2021, Eq 5.11).

    Two forms (``form``):

    - ``"code"``, the reference code's: ``k(h, h') = exp(Σ_i ℓ_i 1[h_i = h'_i] / Σ_i ℓ_i)``. The
      weights are normalised by their sum, so only their ratios matter and two configurations
      that differ everywhere always correlate ``1/e`` of ``k(h, h) = e``; log weights have a
      standard normal prior, which fixes their scale and keeps the fit well posed.
    - ``"paper"``, Eq 5.11 as the paper writes it, ``exp((1/d) Σ_i ℓ_i 1[h_i = h'_i])``, divided by
      its value at ``h = h'`` (a constant the output scale takes): ``k(h, h') = exp(−(1/d) Σ_i ℓ_i
      1[h_i ≠ h'_i])``, ``k(h, h) = 1``. The weights' mean sets how fast the correlation falls
      with the number of mismatches, and the data set it; log weights have a ``N(1, 1)`` prior
      and start at its mode (``ℓ = e``).

    Either is positive semi-definite as the exponential of a valid kernel. A larger weight makes a
    mismatch in that coordinate cost more. With ``ard=False`` one weight serves every coordinate
    (the code's form is then ``exp(ℓ Σ_i 1[h_i = h'_i] / d)``).

    >>> kernel = TransformedOverlapKernel(3, active_dims=[0, 1, 2])
    >>> K = kernel(torch.tensor([[0.0, 1, 2], [0, 1, 0]], dtype=torch.float64)).to_dense()
    """

    has_lengthscale = False
    is_stationary = True  # k(h, h) is the same for every h

    def __init__(self, n_dims: int, *, ard: bool = True, form: str = "code", **kwargs):
        super().__init__(**kwargs)
        if form not in OVERLAP_FORMS:
            raise ValueError(f"form must be one of {OVERLAP_FORMS}, got {form!r}")
        self.n_dims = n_dims
        self.ard = ard
        self.form = form
        shape = (1, n_dims) if ard else (1, 1)
        centre = 1.0 if form == "paper" else 0.0
        self.register_parameter("raw_weights", torch.nn.Parameter(torch.full(shape, centre)))
        self.register_prior("log_weights_prior", NormalPrior(centre, 1.0), lambda m: m.raw_weights)

    @property
    def weights(self) -> torch.Tensor:
        """The weights ``ℓ_i = exp(raw_weights)``."""
        return torch.exp(self.raw_weights)

    @weights.setter
    def weights(self, value: float | torch.Tensor) -> None:
        value = torch.as_tensor(value, dtype=self.raw_weights.dtype, device=self.raw_weights.device)
        self.initialize(raw_weights=torch.log(value.expand_as(self.raw_weights)))

    def forward(self, x1, x2, diag: bool = False, last_dim_is_batch: bool = False, **params):
        w = self.weights.reshape(-1).to(x1.dtype).expand(x1.shape[-1])
        if diag:
            agree = (_matches(x1, x2, True) * w).sum(-1)
        else:
            agree = _weighted_agreement(x1, x2, w)
        if self.form == "paper":
            return torch.exp((agree - w.sum()) / x1.shape[-1])
        return torch.exp(agree / w.sum())


def _weighted_agreement(x1: torch.Tensor, x2: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``Σ_i w_i 1[x1_i = x2_i]`` for all pairs of rows, as one matrix product of one-hot codes.

    Indices are small non-negative integers; with ``K`` the largest index + 1, the one-hot codes
    have ``d·K`` columns. Falls back to the ``(n, m, d)`` comparison when that would be larger.
    """
    d = x1.shape[-1]
    k = int(torch.maximum(x1.detach().max(), x2.detach().max()).item()) + 1 if d else 1
    if d == 0 or k * d > 4096 or k < 1:
        return (_matches(x1, x2, False) * w).sum(-1)
    levels = torch.arange(k, dtype=x1.dtype, device=x1.device)
    o1 = (x1.unsqueeze(-1) == levels).to(x1.dtype).flatten(-2)
    o2 = (x2.unsqueeze(-1) == levels).to(x2.dtype).flatten(-2)
    return pairwise_products(o1 * w.repeat_interleave(k), o2)


def pairwise_products(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """``left @ rightᵀ`` over the last two dims, ``(..., n, S) × (..., m, S) → (..., n, m)``.

    When ``right`` has no batch of its own (one training set for a batch of candidates), it is
    one 2-D product of all rows of ``left``, not one product per batch.
    """
    if 2 < right.dim() <= left.dim() and all(size == 1 for size in right.shape[:-2]):
        right = right.reshape(right.shape[-2:])
    if right.dim() == 2 and left.dim() > 2:
        flat = left.reshape(-1, left.shape[-1]) @ right.T
        return flat.reshape(*left.shape[:-1], right.shape[-2])
    return left @ right.transpose(-1, -2)


def casmopolitan_kernel(
    cont_dims: Sequence[int], cat_dims: Sequence[int], form: str = "code"
) -> Kernel:
    """CASMOPOLITAN's kernel: CoCaBO's mixture with the transformed overlap kernel (ARD).

    Matérn-5/2 ARD on the continuous (and integer) columns, :class:`TransformedOverlapKernel` of
    the given ``form`` (one of :data:`OVERLAP_FORMS`) on the categorical ones, mixed as
    in :class:`MixtureKernel` when both kinds exist.
    """
    if not cat_dims:
        return scaled(matern_kernel(cont_dims))
    overlap = TransformedOverlapKernel(len(cat_dims), form=form, active_dims=list(cat_dims))
    if not cont_dims:
        return scaled(overlap)
    return scaled(MixtureKernel(overlap, matern_kernel(cont_dims)))
