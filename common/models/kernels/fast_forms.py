"""Each kernel's fast forms: its MAP term and its cross-covariance part, registered by the kernel.

A GP's hyper-parameters are fitted by the MAP objective with hand-derived gradients
(:mod:`common.models.analytic_map`), and its acquisition is evaluated with a hand-written
``k(x, X)`` and its gradient in ``x`` (:mod:`common.models.cross_covariance`). Both walk the
model's kernel tree and ask this registry, by the kernel's exact class, for that kernel's part:
a :class:`MAPTerm` (its Gram matrix on the training rows and its gradient in the parameters)
and a :class:`CrossPart` (its covariance with candidates and its gradient in them). Each kernel
module registers its own forms beside its definition (:func:`register`); a kernel that has none
declares so (:func:`register_slow_path`) and is fitted and evaluated through gpytorch and
autograd. A kernel class that is not registered at all takes the slow path too, and a test finds
it.

>>> register(MyKernel, map_term=my_map_term, cross_part=my_cross_part)
>>> forms_of(kernel).map_term(kernel, X, path, fit)  # a MAPTerm
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

SQRT5 = math.sqrt(5.0)


@dataclass(frozen=True)
class FastForms:
    """A kernel class's fast forms: ``map_term(kernel, X, path, fit)`` returns its
    :class:`MAPTerm` on training rows ``X`` (its columns already selected), with ``fit.own(path,
    attr)`` its parameters and ``fit.term(child, path)`` its children's terms;
    ``cross_part(kernel, X, dims, part_of)`` returns its :class:`CrossPart` (``None``: not
    covered), with ``part_of(child, X)`` its children's parts. ``None`` for either: the slow
    path (gpytorch and autograd)."""

    map_term: Callable[..., Any] | None = None
    cross_part: Callable[..., Any] | None = None


_REGISTRY: dict[type, FastForms] = {}


def register(
    kernel_class: type,
    *,
    map_term: Callable[..., Any] | None = None,
    cross_part: Callable[..., Any] | None = None,
) -> None:
    """Declare ``kernel_class``'s fast forms (called by the module that defines the kernel)."""
    _REGISTRY[kernel_class] = FastForms(map_term, cross_part)


def register_slow_path(kernel_class: type) -> None:
    """Declare that ``kernel_class`` has no fast forms: it is fitted and evaluated through
    gpytorch and autograd."""
    _REGISTRY[kernel_class] = FastForms()


def forms_for(kernel_class: type) -> FastForms | None:
    """The fast forms registered for ``kernel_class`` (``None``: not registered)."""
    return _REGISTRY.get(kernel_class)


def forms_of(kernel: Any) -> FastForms | None:
    """The fast forms registered for ``kernel``'s exact class (a subclass has its own)."""
    return forms_for(type(kernel))


# ---------------------------------------------------------------------- MAP terms
class MAPParameter:
    """One raw parameter: its slice of the flat vector, and the transform to its value.

    Gradients accumulate on the value's scale (``add_value_grad``, from the kernel terms and
    priors) and on the raw scale (``grad_raw``, from priors on the raw parameter and
    log-Jacobians); :meth:`gradient` turns them into ``∂L/∂raw`` once per evaluation."""

    def __init__(self, tensor: torch.Tensor, start: int, constraint) -> None:
        self.start, self.stop = start, start + tensor.numel()
        self.kind, self.lower, self.upper = _transform_kind(constraint)
        self.load(np.zeros(self.stop))

    def load(self, flat: np.ndarray) -> None:
        self.raw = flat[self.start : self.stop]
        self.grad_value: np.ndarray | float = 0.0
        self.grad_raw: np.ndarray | float = 0.0

    def value(self) -> np.ndarray:
        if self.kind == "softplus":
            return _softplus(self.raw) + self.lower
        if self.kind == "sigmoid":
            return self.lower + (self.upper - self.lower) * _sigmoid(self.raw)
        if self.kind == "exp":
            return np.exp(self.raw) + self.lower
        return self.raw

    def add_value_grad(self, grad_value: np.ndarray | float) -> None:
        """Accumulate ``∂L/∂value`` (a scalar is shared by every entry)."""
        self.grad_value = self.grad_value + grad_value

    def gradient(self) -> np.ndarray:
        """``∂L/∂raw`` of everything accumulated, one entry per scalar of the parameter."""
        if self.kind == "softplus":
            slope = np.where(self.raw > 20.0, 1.0, _sigmoid(self.raw))
        elif self.kind == "sigmoid":
            s = _sigmoid(self.raw)
            slope = (self.upper - self.lower) * s * (1.0 - s)
        elif self.kind == "exp":
            slope = np.exp(self.raw)
        else:
            slope = 1.0
        total = np.asarray(self.grad_value * slope + self.grad_raw, dtype=float)
        return np.broadcast_to(total, self.raw.shape)


def _softplus(x: np.ndarray) -> np.ndarray:
    """torch's softplus (β = 1, linear above 20)."""
    return np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _transform_kind(constraint) -> tuple[str, float, float]:
    """``("identity" | "softplus" | "sigmoid" | "exp", lower, upper)`` for a gpytorch constraint
    (``None``: no constraint); raises ``Unsupported`` for any other transform."""
    if constraint is None or not constraint.enforced:
        return "identity", -math.inf, math.inf
    lower, upper = float(constraint.lower_bound), float(constraint.upper_bound)
    transform = constraint._transform
    if (
        isinstance(transform, torch.nn.Softplus)
        and transform.beta == 1
        and not math.isfinite(upper)
    ):
        if transform.threshold != 20:
            raise Unsupported
        return "softplus", lower, upper
    if transform in (torch.sigmoid, torch.nn.functional.sigmoid) and math.isfinite(upper):
        return "sigmoid", lower, upper
    if transform is torch.exp and not math.isfinite(upper):  # BO-FM's log_positive
        return "exp", lower, upper
    raise Unsupported


class Unsupported(Exception):
    """A model part this module has no closed form for (the autograd path is used)."""


# ---------------------------------------------------------------------- kernel terms
class MAPTerm(ABC):
    """A kernel's Gram matrix on the fixed training rows: ``forward()`` computes it from the
    parameters' current values, ``backward(G)`` adds ``Σ G ⊙ ∂K/∂θ`` to each parameter's
    gradient (and passes the right ``G`` to its parts)."""

    @abstractmethod
    def forward(self) -> np.ndarray:
        """The Gram matrix at the parameters' current values (kept for ``backward``)."""

    @abstractmethod
    def backward(self, G: np.ndarray) -> None:
        """Add ``Σ G ⊙ ∂K/∂θ`` to the gradient of each parameter ``θ`` of this term."""


class SquaredDistances:
    """Per-column squared differences of fixed rows, never stored as an ``(d, n, n)`` stack:
    ``Σ_j c_j (x_j − x'_j)²`` from the Gram matrix of the scaled rows, and ``Σ_ab W_ab (x_aj −
    x_bj)²`` per column ``j`` from ``W X`` (memory ``O(n²)``, not ``O(d n²)``, at a thousand
    rows of many columns)."""

    def __init__(self, X: np.ndarray) -> None:
        self.X = np.ascontiguousarray(X)
        self.X_sq = self.X * self.X

    def __len__(self) -> int:
        return self.X.shape[1]

    def combined(self, c: np.ndarray) -> np.ndarray:
        """``Σ_j c_j (x_j − x'_j)²`` for every pair of rows (exactly 0 on the diagonal)."""
        z = self.X * np.sqrt(c)
        sq = self.X_sq @ c
        out = sq[:, None] + sq[None, :] - 2.0 * (z @ z.T)
        np.maximum(out, 0.0, out=out)
        np.fill_diagonal(out, 0.0)
        return out

    def weighted(self, W: np.ndarray) -> np.ndarray:
        """``Σ_ab W_ab (x_aj − x_bj)²`` for every column ``j``."""
        spread = self.X_sq.T @ (W.sum(1) + W.sum(0))
        return spread - 2.0 * np.einsum("aj,aj->j", self.X, W @ self.X)


# ---------------------------------------------------------------------- cross-covariance parts
class CrossPart(ABC):
    """``k(x, X)`` of one kernel module: ``forward`` returns it and what ``backward`` needs;
    ``backward(G, saved)`` adds ``Σ_i G_i ∂k(x, X_i)/∂x`` to ``grad`` (``(m, D)``, all columns)."""

    smooth = False  # whether k depends smoothly on x (else backward adds nothing)

    @abstractmethod
    def forward(self, x: np.ndarray):
        """``(k(x, X), saved)`` for rows ``x`` (``(m, D)``)."""

    @abstractmethod
    def backward(self, G: np.ndarray, saved, grad: np.ndarray) -> None:
        """Add ``Σ_i G_i ∂k(x, X_i)/∂x`` to ``grad``."""

    @abstractmethod
    def diag(self, x: np.ndarray) -> np.ndarray:
        """``k(x, x)`` of every row (``(m,)``): the prior variance."""


def same_active_dims(scale, base) -> bool:
    """Whether a scale kernel's base sees the columns it would see through the scale kernel
    (which selects its own ``active_dims`` and calls the base's ``forward`` on them)."""
    if scale.active_dims is None:
        return base.active_dims is None
    return base.active_dims is not None and torch.equal(scale.active_dims, base.active_dims)
