"""The covariance of candidate rows with a GP's fixed training rows, differentiable in the
candidates by hand.

Every acquisition call evaluates ``k(x, X)`` for a batch of candidates ``x`` against the ``n``
training rows, and a gradient ascent also differentiates it in ``x``. Through gpytorch's kernel
modules and autograd this is a few dozen small tensor operations recorded and replayed per call,
which at a hundred observations costs far more than their arithmetic. For the kernels the
methods build the derivative is short: only Matérn parts depend smoothly on ``x``
(``∂k/∂x_j = −(5/3)(1 + √5 r) e^{−√5 r} (x_j − X_j) / ℓ_j²``), category matches have no gradient,
and sums, products and scales pass it on. The hyper-parameters are fixed (a fitted model in eval
mode), so the training rows' scaled values and one-hot codes are computed once per model.

Supported: ``ScaleKernel``, :class:`common.models.kernels.mixture.MixtureKernel`, Matérn-5/2,
:class:`common.models.kernels.overlap.OverlapKernel`,
:class:`common.models.kernels.overlap.TransformedOverlapKernel` and BO-FM's
:class:`common.models.kernels.frequency_modulated.FMKernel` (:func:`cross_kernel` returns ``None``
for anything else; the caller then uses the kernel itself).

>>> cross = cross_kernel(model.covar_module, train_X)
>>> K = cross(x)  # (m, n) torch tensor; gradients flow to the continuous columns of x
"""

from __future__ import annotations

import math

import numpy as np
import torch

from common.models.kernels.fast_forms import CrossPart, forms_of

SQRT5 = math.sqrt(5.0)


def _part(kernel, X: np.ndarray) -> CrossPart | None:
    """The cross-covariance part of ``kernel``, from its registered fast forms
    (:mod:`common.models.kernels.fast_forms`); ``None`` where it has none."""
    dims = np.arange(X.shape[1]) if kernel.active_dims is None else kernel.active_dims.numpy()
    forms = forms_of(kernel)
    if forms is None or forms.cross_part is None:
        return None
    with torch.no_grad():
        return forms.cross_part(kernel, X, dims, _part)


class CrossKernel:
    """``x ↦ k(x, X)`` for one kernel with fixed hyper-parameters and fixed training rows
    ``X``: a torch tensor ``(..., m, D) → (..., m, n)``, differentiable in ``x``."""

    def __init__(self, part: CrossPart, n_train: int) -> None:
        self.part, self.n = part, n_train

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        out = _CrossFunction.apply(flat, self)
        return out.reshape(*x.shape[:-1], self.n)


class _CrossFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, cross: CrossKernel) -> torch.Tensor:
        K, saved = cross.part.forward(x.detach().numpy())
        ctx.cross, ctx.saved, ctx.shape = cross, saved, x.shape
        return torch.from_numpy(np.ascontiguousarray(K))

    @staticmethod
    def backward(ctx, G: torch.Tensor):
        grad = np.zeros(ctx.shape)
        if ctx.cross.part.smooth:
            ctx.cross.part.backward(G.detach().numpy(), ctx.saved, grad)
        return torch.from_numpy(grad), None


def cross_kernel(kernel, X: torch.Tensor) -> CrossKernel | None:
    """The :class:`CrossKernel` of ``kernel`` (its current hyper-parameters) against training
    rows ``X`` (``(n, D)``, float64 on the CPU), or ``None`` where the kernel has a part not
    covered here."""
    if X.dim() != 2 or X.dtype != torch.float64 or X.device.type != "cpu":
        return None
    part = _part(kernel, X.detach().numpy())
    return None if part is None else CrossKernel(part, X.shape[0])
