"""Categorical overlap kernels: CoCaBO's overlap kernel (Ru et al. 2020) and CASMOPOLITAN's
transformed overlap kernel (Wan et al. 2021, two forms), with their fast forms.

Categorical columns hold choice indices; these kernels only compare them for equality.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from gpytorch.kernels import Kernel
from gpytorch.priors import NormalPrior

from common.models.kernels.dense import pairwise_products
from common.models.kernels.fast_forms import (
    CrossPart,
    MAPParameter,
    MAPTerm,
    register,
)


def _matches(x1: torch.Tensor, x2: torch.Tensor, diag: bool) -> torch.Tensor:
    """Per-dimension equality indicators, ``(..., n, m, d)`` (``(..., n, d)`` on the diagonal)."""
    if diag:
        return (x1 == x2).to(x1.dtype)
    return (x1.unsqueeze(-2) == x2.unsqueeze(-3)).to(x1.dtype)


class OverlapKernel(Kernel):
    """CoCaBO's overlap kernel: the fraction of categorical coordinates that agree (Ru et al. 2020).

    ``k(h, h') = (1/d) Σ_i 1[h_i = h'_i]``, no ARD, values in [0, 1].
    """

    has_lengthscale = False
    is_stationary = True  # k(h, h) = 1 for every h

    def forward(self, x1, x2, diag: bool = False, last_dim_is_batch: bool = False, **params):
        return _matches(x1, x2, diag).mean(-1)


OVERLAP_FORMS = ("code", "paper")


class TransformedOverlapKernel(Kernel):
    """CASMOPOLITAN's transformed overlap kernel with ARD weights.

    Wan et al., ICML 2021; written as Eq. 5.11 in B. Ru, "Bayesian Optimisation for Automated
    Machine Learning", DPhil thesis, University of Oxford, 2022. Two forms (``form``):

    - ``"code"``, the reference code's: ``k(h, h') = exp(Σ_i ℓ_i 1[h_i = h'_i] / Σ_i ℓ_i)``. The
      weights are normalised by their sum, so only their ratios matter and two configurations
      that differ everywhere always correlate ``1/e`` of ``k(h, h) = e``; log weights have a
      standard normal prior, which fixes their scale and keeps the fit well posed.
    - ``"paper"``, Eq. 5.11 as Ru's thesis writes it, ``exp((1/d) Σ_i ℓ_i 1[h_i = h'_i])``, divided
      by its value at ``h = h'`` (a constant the output scale takes): ``k(h, h') = exp(−(1/d) Σ_i
      ℓ_i 1[h_i ≠ h'_i])``, ``k(h, h) = 1``. The weights' mean sets how fast the correlation falls
      with the number of mismatches, and the data set it; log weights have a ``N(1, 1)`` prior and
      start at its mode (``ℓ = e``).

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


# ---------------------------------------------------------------------- fast forms
class _OneHot:
    """Categorical columns as one-hot codes ``O`` (one column per level present): the matches
    ``Σ_i w_i [x_i = x'_i]`` of every pair are ``(O w) Oᵀ``, and ``Σ_ab W_ab [x_ai = x_bi]`` per
    column ``i`` is the sum over its levels of ``diag(Oᵀ W O)``."""

    def __init__(self, X: np.ndarray) -> None:
        codes, owners = [], []
        for i in range(X.shape[1]):
            for level in np.unique(X[:, i]):
                codes.append(X[:, i] == level)
                owners.append(i)
        self.O = np.stack(codes, 1).astype(float) if codes else np.zeros((len(X), 0))
        self.owner = np.asarray(owners, dtype=int)
        self.d = X.shape[1]

    def matches(self, w: np.ndarray) -> np.ndarray:
        return (self.O * w[self.owner]) @ self.O.T

    def weighted(self, W: np.ndarray) -> np.ndarray:
        per_level = np.einsum("al,al->l", W @ self.O, self.O)
        return np.bincount(self.owner, weights=per_level, minlength=self.d)


class _OverlapTerm(MAPTerm):
    """CoCaBO's overlap kernel: the fraction of matching categories (no parameters)."""

    def __init__(self, X: np.ndarray) -> None:
        self.K = _OneHot(X).matches(np.full(X.shape[1], 1.0 / max(X.shape[1], 1)))

    def forward(self) -> np.ndarray:
        return self.K

    def backward(self, G: np.ndarray) -> None:
        """Nothing: the overlap kernel has no parameters."""


class _TransformedOverlapTerm(MAPTerm):
    """:class:`common.models.kernels.mixture.TransformedOverlapKernel` with ``A = Σ_i w_i M_i``, ``W
    = Σ_i w_i``: the code's form ``exp(A / W)``, the paper's ``exp((A − W) / d)``; ``w =
    exp(raw)``."""

    def __init__(self, X: np.ndarray, weights: MAPParameter, form: str) -> None:
        self.M = _OneHot(X)
        self.weights, self.form = weights, form

    def forward(self) -> np.ndarray:
        d = self.M.d
        self.w = np.broadcast_to(np.exp(self.weights.raw), (d,))
        self.A = self.M.matches(self.w)
        self.W = float(self.w.sum())
        exponent = self.A / self.W if self.form == "code" else (self.A - self.W) / d
        self.K = np.exp(exponent)
        return self.K

    def backward(self, G: np.ndarray) -> None:
        GK = G * self.K
        per_match = self.M.weighted(GK)
        if self.form == "code":
            grad_w = per_match / self.W - float(np.vdot(GK, self.A)) / self.W**2
        else:
            grad_w = (per_match - GK.sum()) / self.M.d
        grad_raw = grad_w * self.w
        if self.weights.raw.size == 1:
            grad_raw = grad_raw.sum(keepdims=True)
        self.weights.add_value_grad(grad_raw)  # the identity transform: raw's own gradient


class _Matches(CrossPart):
    """Category matches through one-hot codes: ``A = Σ_j w_j [x_j = X_j]`` as one product of
    the candidates' codes with the training rows' weighted codes."""

    def __init__(self, X: np.ndarray, dims: np.ndarray, weights: np.ndarray) -> None:
        self.dims = dims
        columns, levels, codes = [], [], []
        for j, w in zip(range(len(dims)), np.broadcast_to(weights, (len(dims),)), strict=True):
            for level in np.unique(X[:, dims[j]]):
                columns.append(j)
                levels.append(level)
                codes.append(w * (X[:, dims[j]] == level))
        self.columns = np.asarray(columns, dtype=int)
        self.levels = np.asarray(levels, dtype=float)
        self.T = np.stack(codes, 1) if codes else np.zeros((len(X), 0))

    def backward(self, G, saved, grad):
        """Nothing: a category match has no gradient."""

    def agreement(self, x):
        C = (x[:, self.dims][:, self.columns] == self.levels).astype(float)
        return C @ self.T.T


class _OverlapPart(_Matches):
    def __init__(self, X, dims):
        super().__init__(X, dims, np.array(1.0 / max(len(dims), 1)))

    def forward(self, x):
        return self.agreement(x), None

    def diag(self, x):
        return np.ones(len(x))


class _TransformedOverlapPart(_Matches):
    def __init__(self, X, dims, raw_weights: np.ndarray, form: str):
        w = np.broadcast_to(np.exp(raw_weights.reshape(-1)), (len(dims),))
        super().__init__(X, dims, w)
        self.form, self.total, self.d = form, float(w.sum()), len(dims)

    def forward(self, x):
        A = self.agreement(x)
        exponent = A / self.total if self.form == "code" else (A - self.total) / self.d
        return np.exp(exponent), None

    def diag(self, x):
        return np.full(len(x), math.e if self.form == "code" else 1.0)


register(
    OverlapKernel,
    map_term=lambda kernel, X, path, fit: _OverlapTerm(X),
    cross_part=lambda kernel, X, dims, part_of: _OverlapPart(X, dims),
)


def _transformed_map_term(kernel, X, path: str, fit) -> MAPTerm:
    return _TransformedOverlapTerm(X, fit.own(path, "raw_weights"), kernel.form)


def _transformed_cross_part(kernel, X, dims, part_of) -> CrossPart:
    return _TransformedOverlapPart(X, dims, kernel.raw_weights.detach().numpy(), kernel.form)


register(
    TransformedOverlapKernel,
    map_term=_transformed_map_term,
    cross_part=_transformed_cross_part,
)
