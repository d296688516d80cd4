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

Supported: ``ScaleKernel``, :class:`common.kernels.MixtureKernel`, Matérn-5/2,
:class:`common.kernels.OverlapKernel`, :class:`common.kernels.TransformedOverlapKernel` and BO-FM's
:class:`common.fm_kernel.FMKernel` (:func:`cross_kernel` returns ``None`` for anything else; the
caller then uses the kernel itself).

>>> cross = cross_kernel(model.covar_module, train_X)
>>> K = cross(x)  # (m, n) torch tensor; gradients flow to the continuous columns of x
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np
import torch

SQRT5 = math.sqrt(5.0)


class _Part(ABC):
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


class _Scale(_Part):
    def __init__(self, base: _Part, scale: float) -> None:
        self.base, self.scale = base, scale
        self.smooth = base.smooth

    def forward(self, x):
        K, saved = self.base.forward(x)
        return self.scale * K, saved

    def backward(self, G, saved, grad):
        self.base.backward(self.scale * G, saved, grad)

    def diag(self, x):
        return self.scale * self.base.diag(x)


class _Mixture(_Part):
    def __init__(self, cat: _Part, cont: _Part, mix: float) -> None:
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


class _Matern52(_Part):
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


class _Matches(_Part):
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


class _Overlap(_Matches):
    def __init__(self, X, dims):
        super().__init__(X, dims, np.array(1.0 / max(len(dims), 1)))

    def forward(self, x):
        return self.agreement(x), None

    def diag(self, x):
        return np.ones(len(x))


class _TransformedOverlap(_Matches):
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


class _Graph:
    """One graph of the ModLap kernel with its fitted ``β``
    (:func:`common.fm_kernel.graph_factor`)."""

    def __init__(self, kernel, p: int) -> None:
        from common.fm_kernel import graph_spectrum

        self.col, self.n = kernel.graph_cols[p], kernel.n_nodes[p]
        self.beta = float(kernel.beta.reshape(-1)[p])
        self.spectrum = graph_spectrum(kernel, p)
        everyone = np.arange(self.n)  # a complete graph's diagonal is 1 at every node
        self.node_diag = (
            None if self.spectrum is None else np.diag(self.factor(everyone, everyone, 1.0)[0])
        )

    def nodes(self, x: np.ndarray) -> np.ndarray:
        return np.clip(np.round(x[:, self.col]), 0, self.n - 1).astype(int)

    def factor(self, v: np.ndarray, w: np.ndarray, t) -> tuple[np.ndarray, np.ndarray]:
        """``f(v_i, w_j, t_ij)`` and ``∂f/∂t`` for node arrays ``v`` (``m``) and ``w`` (``n``)."""
        from common.fm_kernel import graph_factor

        return graph_factor(v, w, t, self.beta, self.n, self.spectrum)


class _FrequencyModulated(_Part):
    """BO-FM's ModLap kernel (:class:`common.fm_kernel.FMKernel`): ``k = Π_p f_p(v_p, v'_p, t_p)``
    with ``t_p = 1 + a_p d²`` and ``d²`` the shared scaled squared distance of the continuous
    columns, so ``∂k/∂d² = k Σ_p a_p f_p'(t_p) / f_p``. Graph columns (nodes) have no gradient.
    Without continuous columns every factor is a fixed table of node pairs: ``k = exp(Σ_p log
    T_p[v_p, v'_p])``, one product of the candidates' rows of the log tables with the training
    rows' one-hot nodes (as :class:`common.fm_kernel.FMKernel` computes it)."""

    def __init__(self, kernel, X: np.ndarray) -> None:
        self.cont = np.asarray(kernel.cont_cols, dtype=int)
        self.smooth = bool(len(self.cont))
        self.graphs = [_Graph(kernel, p) for p in range(len(kernel.graph_cols))]
        self.train_nodes = [g.nodes(X) for g in self.graphs]
        if self.smooth:
            self.inv = 1.0 / kernel.ls.detach().numpy().reshape(-1)
            self.Z = X[:, self.cont] * self.inv
            self.Z_sq = (self.Z * self.Z).sum(1)
            self.a = kernel.alpha.detach().numpy().reshape(-1) / len(self.graphs)
            return
        tiny = np.finfo(float).tiny
        everyone = [np.arange(g.n) for g in self.graphs]
        self.log_tables = [
            np.log(np.maximum(g.factor(nodes, nodes, 1.0)[0], tiny))
            for g, nodes in zip(self.graphs, everyone, strict=True)
        ]
        self.onehot = np.concatenate(
            [np.eye(g.n)[w] for g, w in zip(self.graphs, self.train_nodes, strict=True)], 1
        )

    def forward(self, x):
        if not self.smooth:
            left = np.concatenate(
                [t[g.nodes(x)] for g, t in zip(self.graphs, self.log_tables, strict=True)], 1
            )
            return np.exp(left @ self.onehot.T), None
        z = x[:, self.cont] * self.inv
        d2 = (z * z).sum(1)[:, None] + self.Z_sq[None, :] - 2.0 * (z @ self.Z.T)
        d2 = np.maximum(d2, 0.0) / len(self.cont)
        K, slope = 1.0, 0.0
        for g, w, a in zip(self.graphs, self.train_nodes, self.a, strict=True):
            f, df = g.factor(g.nodes(x), w, 1.0 + a * d2)
            K = K * f
            slope = slope + a * df / np.maximum(f, np.finfo(float).tiny)
        return K, (z, K * slope)

    def backward(self, G, saved, grad):
        z, dK_dd2 = saved
        W = G * dK_dd2 * (2.0 / len(self.cont))  # ∂d²/∂z_j = 2 (z_j − Z_j) / D_c
        dz = W.sum(1)[:, None] * z - W @ self.Z
        grad[:, self.cont] += dz * self.inv

    def diag(self, x):
        """A complete graph's factor is 1 at ``v = v'``, ``t = 1`` (its mean diagonal value);
        another graph's is its node's own diagonal value (not stationary)."""
        out = np.ones(len(x))
        for g in self.graphs:
            if g.node_diag is not None:
                out = out * g.node_diag[g.nodes(x)]
        return out


def _part(kernel, X: np.ndarray) -> _Part | None:
    from gpytorch.kernels import MaternKernel, ScaleKernel

    from common.fm_kernel import FMKernel
    from common.kernels import MixtureKernel, OverlapKernel, TransformedOverlapKernel

    dims = np.arange(X.shape[1]) if kernel.active_dims is None else kernel.active_dims.numpy()
    with torch.no_grad():
        if type(kernel) is ScaleKernel:
            base = _part(kernel.base_kernel, X)
            if base is None or not same_active_dims(kernel, kernel.base_kernel):
                return None
            return _Scale(base, float(kernel.outputscale.reshape(-1)[0]))
        if type(kernel) is MixtureKernel:
            cat, cont = _part(kernel.cat_kernel, X), _part(kernel.cont_kernel, X)
            if cat is None or cont is None or kernel.active_dims is not None:
                return None
            return _Mixture(cat, cont, float(kernel.mix.reshape(-1)[0]))
        if type(kernel) is MaternKernel and kernel.nu == 2.5 and not kernel.batch_shape:
            return _Matern52(X, dims, kernel.lengthscale.detach().numpy().reshape(-1))
        if type(kernel) is FMKernel:
            return _FrequencyModulated(kernel, X)
        if type(kernel) is OverlapKernel:
            return _Overlap(X, dims)
        if type(kernel) is TransformedOverlapKernel:
            return _TransformedOverlap(X, dims, kernel.raw_weights.detach().numpy(), kernel.form)
    return None


def same_active_dims(scale, base) -> bool:
    """Whether a scale kernel's base sees the columns it would see through the scale kernel
    (which selects its own ``active_dims`` and calls the base's ``forward`` on them)."""
    if scale.active_dims is None:
        return base.active_dims is None
    return base.active_dims is not None and torch.equal(scale.active_dims, base.active_dims)


class CrossKernel:
    """``x ↦ k(x, X)`` for one kernel with fixed hyper-parameters and fixed training rows
    ``X``: a torch tensor ``(..., m, D) → (..., m, n)``, differentiable in ``x``."""

    def __init__(self, part: _Part, n_train: int) -> None:
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
