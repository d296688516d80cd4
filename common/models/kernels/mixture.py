"""CoCaBO's sum/product mixture of a categorical and a continuous kernel (Ru et al. 2020), the
methods' mixed kernels built from it, and its fast forms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from gpytorch.constraints import Interval
from gpytorch.kernels import Kernel

from common.models.kernels.dense import kernel_matrix
from common.models.kernels.fast_forms import (
    CrossPart,
    MAPParameter,
    MAPTerm,
    Unsupported,
    register,
)
from common.models.kernels.matern import matern_kernel
from common.models.kernels.overlap import OVERLAP_FORMS, OverlapKernel, TransformedOverlapKernel
from common.models.kernels.scale import scaled


class MixtureKernel(Kernel):
    """CoCaBO's mixture ``(1 − λ)(k_h + k_x) + λ k_h k_x``, λ ∈ [0, 1] learned.

    Ru et al., ICML 2020; written as Eq. 5.10 in B. Ru, "Bayesian Optimisation for Automated
    Machine Learning", DPhil thesis, University of Oxford, 2022.

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


def cocabo_kernel(cont_dims: Sequence[int], cat_dims: Sequence[int]) -> Kernel:
    """CoCaBO's kernel for a space: the mixture when both kinds exist, else the one that does."""
    if not cat_dims:
        return scaled(matern_kernel(cont_dims))
    overlap = OverlapKernel(active_dims=list(cat_dims))
    if not cont_dims:
        return scaled(overlap)
    return scaled(MixtureKernel(overlap, matern_kernel(cont_dims)))


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


def casmopolitan_kernels(cont_dims: Sequence[int], cat_dims: Sequence[int]) -> list[Callable]:
    """The kernels a CASMOPOLITAN GP chooses among (:mod:`common.models.kernel_choice`): with
    categoricals, the transformed overlap kernel in the reference code's form and in the paper's
    (:data:`common.models.kernels.overlap.OVERLAP_FORMS`), else the one Matérn kernel."""
    from functools import partial

    forms = OVERLAP_FORMS if len(cat_dims) else OVERLAP_FORMS[:1]
    return [partial(casmopolitan_kernel, list(cont_dims), list(cat_dims), form) for form in forms]


# ---------------------------------------------------------------------- fast forms
class _MixtureTerm(MAPTerm):
    """``(1 − λ)(K_h + K_x) + λ K_h K_x`` (:class:`common.models.kernels.mixture.MixtureKernel`)."""

    def __init__(self, cat: MAPTerm, cont: MAPTerm, mix: MAPParameter) -> None:
        self.cat, self.cont, self.mix = cat, cont, mix

    def forward(self) -> np.ndarray:
        self.Kh, self.Kx = self.cat.forward(), self.cont.forward()
        self.lam = float(self.mix.value()[0])
        return (1.0 - self.lam) * (self.Kh + self.Kx) + self.lam * self.Kh * self.Kx

    def backward(self, G: np.ndarray) -> None:
        Kh, Kx, lam = self.Kh, self.Kx, self.lam
        self.mix.add_value_grad(float(np.vdot(G, Kh * Kx - Kh - Kx)))
        self.cat.backward(G * ((1.0 - lam) + lam * Kx))
        self.cont.backward(G * ((1.0 - lam) + lam * Kh))


class _MixturePart(CrossPart):
    def __init__(self, cat: CrossPart, cont: CrossPart, mix: float) -> None:
        self.cat, self.cont, self.mix = cat, cont, mix
        self.smooth = cat.smooth or cont.smooth

    def forward(self, x):
        (Kh, sh), (Kx, sx) = self.cat.forward(x), self.cont.forward(x)
        lam = self.mix
        return (1.0 - lam) * (Kh + Kx) + lam * Kh * Kx, (Kh, sh, Kx, sx)

    def backward(self, G, saved, grad):
        Kh, sh, Kx, sx = saved
        lam = self.mix
        if self.cat.smooth:
            self.cat.backward(G * ((1.0 - lam) + lam * Kx), sh, grad)
        if self.cont.smooth:
            self.cont.backward(G * ((1.0 - lam) + lam * Kh), sx, grad)

    def diag(self, x):
        dh, dx = self.cat.diag(x), self.cont.diag(x)
        return (1.0 - self.mix) * (dh + dx) + self.mix * dh * dx


def _map_term(kernel, X, path: str, fit) -> MAPTerm:
    mix = fit.own(path, "raw_mix")
    cat = fit.term(kernel.cat_kernel, f"{path}.cat_kernel")
    cont = fit.term(kernel.cont_kernel, f"{path}.cont_kernel")
    if kernel.active_dims is not None:  # the parts select their columns themselves
        raise Unsupported
    return _MixtureTerm(cat, cont, mix)


def _cross_part(kernel, X, dims, part_of) -> CrossPart | None:
    cat, cont = part_of(kernel.cat_kernel, X), part_of(kernel.cont_kernel, X)
    if cat is None or cont is None or kernel.active_dims is not None:
        return None
    return _MixturePart(cat, cont, float(kernel.mix.reshape(-1)[0]))


register(MixtureKernel, map_term=_map_term, cross_part=_cross_part)
