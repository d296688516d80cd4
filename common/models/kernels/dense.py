"""A kernel's matrix as a dense tensor, and the products the kernels share."""

from __future__ import annotations

import torch
from gpytorch.kernels import Kernel


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
