"""gpytorch's ``ScaleKernel`` with the outputscale prior the methods use, and its fast forms."""

from __future__ import annotations

import numpy as np
from gpytorch.kernels import Kernel, ScaleKernel
from gpytorch.priors import GammaPrior

from common.models.kernels.fast_forms import (
    CrossPart,
    MAPParameter,
    MAPTerm,
    Unsupported,
    register,
    same_active_dims,
)


def scaled(kernel: Kernel) -> ScaleKernel:
    """An output scale with a Gamma(2, 1) prior (mode 1: targets are standardised)."""
    return ScaleKernel(kernel, outputscale_prior=GammaPrior(2.0, 1.0))


# ---------------------------------------------------------------------- fast forms
class _ScaleTerm(MAPTerm):
    def __init__(self, base: MAPTerm, scale: MAPParameter) -> None:
        self.base, self.scale = base, scale

    def forward(self) -> np.ndarray:
        self.K_base = self.base.forward()
        self.s = float(self.scale.value()[0])
        return self.s * self.K_base

    def backward(self, G: np.ndarray) -> None:
        self.scale.add_value_grad(float(np.vdot(G, self.K_base)))
        self.base.backward(self.s * G)


class _ScalePart(CrossPart):
    def __init__(self, base: CrossPart, scale: float) -> None:
        self.base, self.scale = base, scale
        self.smooth = base.smooth

    def forward(self, x):
        K, saved = self.base.forward(x)
        return self.scale * K, saved

    def backward(self, G, saved, grad):
        self.base.backward(self.scale * G, saved, grad)

    def diag(self, x):
        return self.scale * self.base.diag(x)


def _map_term(kernel, X, path: str, fit) -> MAPTerm:
    if not same_active_dims(kernel, kernel.base_kernel):
        raise Unsupported
    scale = fit.own(path, "raw_outputscale")
    return _ScaleTerm(fit.term(kernel.base_kernel, f"{path}.base_kernel"), scale)


def _cross_part(kernel, X, dims, part_of) -> CrossPart | None:
    base = part_of(kernel.base_kernel, X)
    if base is None or not same_active_dims(kernel, kernel.base_kernel):
        return None
    return _ScalePart(base, float(kernel.outputscale.reshape(-1)[0]))


register(ScaleKernel, map_term=_map_term, cross_part=_cross_part)
