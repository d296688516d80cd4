"""The MAP objective of mixbo's own GPs in numpy, with hand-derived gradients.

:class:`common.map_fit.MAPObjective` evaluates the negative log posterior of a model's raw
hyper-parameters through torch's autograd. At a hundred observations that costs several times
the linear algebra: autograd records and replays every small operation of the kernel and of the
priors (1.3 ms per evaluation with its gradient on the 9-parameter mixed space, one thread). For
the kernels the methods build, the gradient has a closed form (Rasmussen and Williams 2006,
Eq 5.9): with ``G = ∂L/∂K = ½ (K⁻¹ − α αᵀ)``, each hyper-parameter's gradient is ``Σ G ⊙ ∂K/∂θ``,
and the training rows are fixed during a fit, so what their distances and category matches need
is computed once (scaled rows and one-hot codes, never an ``(d, n, n)`` stack). This module
evaluates that (0.3 ms) and returns ``None`` for any model it does not know, which then keeps
the autograd path.

Supported: a ``SingleTaskGP`` with a constant mean, a Gaussian likelihood, and a kernel built
from ``ScaleKernel``, :class:`common.kernels.MixtureKernel`, Matérn-5/2 (ARD or not),
:class:`common.kernels.OverlapKernel` and :class:`common.kernels.TransformedOverlapKernel`; priors
Gamma, log-normal and normal on the parameters gpytorch and these kernels register them on;
constraints with a softplus or sigmoid transform, or none.

>>> objective = AnalyticMAP.for_model(model)  # None: use MAPObjective's autograd path
>>> loss, grad = objective(raw)  # raw parameters in model.named_parameters() order
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection

import numpy as np
import torch
from scipy.linalg import lapack

from common.cross_kernel import same_active_dims
from common.fm_kernel import graph_factor, graph_spectrum

SQRT5 = math.sqrt(5.0)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


class _Param:
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
    (``None``: no constraint); raises ``_Unsupported`` for any other transform."""
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
            raise _Unsupported
        return "softplus", lower, upper
    if transform in (torch.sigmoid, torch.nn.functional.sigmoid) and math.isfinite(upper):
        return "sigmoid", lower, upper
    if transform is torch.exp and not math.isfinite(upper):  # BO-FM's log_positive
        return "exp", lower, upper
    raise _Unsupported


class _Unsupported(Exception):
    """A model part this module has no closed form for (the autograd path is used)."""


# ---------------------------------------------------------------------- kernel terms
class _Term(ABC):
    """A kernel's Gram matrix on the fixed training rows: ``forward()`` computes it from the
    parameters' current values, ``backward(G)`` adds ``Σ G ⊙ ∂K/∂θ`` to each parameter's
    gradient (and passes the right ``G`` to its parts)."""

    @abstractmethod
    def forward(self) -> np.ndarray:
        """The Gram matrix at the parameters' current values (kept for ``backward``)."""

    @abstractmethod
    def backward(self, G: np.ndarray) -> None:
        """Add ``Σ G ⊙ ∂K/∂θ`` to the gradient of each parameter ``θ`` of this term."""


class _Scale(_Term):
    def __init__(self, base: _Term, scale: _Param) -> None:
        self.base, self.scale = base, scale

    def forward(self) -> np.ndarray:
        self.K_base = self.base.forward()
        self.s = float(self.scale.value()[0])
        return self.s * self.K_base

    def backward(self, G: np.ndarray) -> None:
        self.scale.add_value_grad(float(np.vdot(G, self.K_base)))
        self.base.backward(self.s * G)


class _Mixture(_Term):
    """``(1 − λ)(K_h + K_x) + λ K_h K_x`` (:class:`common.kernels.MixtureKernel`)."""

    def __init__(self, cat: _Term, cont: _Term, mix: _Param) -> None:
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


class _SquaredDistances:
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


class _Matern52(_Term):
    """Matérn-5/2 of ``r² = Σ_j (x_j − x'_j)² / ℓ_j²``; ``∂k/∂ℓ_j = (5/3)(1 + √5 r) e^{−√5 r}
    (x_j − x'_j)² / ℓ_j³``."""

    def __init__(self, X: np.ndarray, lengthscale: _Param) -> None:
        self.D = _SquaredDistances(X)
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


class _Overlap(_Term):
    """CoCaBO's overlap kernel: the fraction of matching categories (no parameters)."""

    def __init__(self, X: np.ndarray) -> None:
        self.K = _OneHot(X).matches(np.full(X.shape[1], 1.0 / max(X.shape[1], 1)))

    def forward(self) -> np.ndarray:
        return self.K

    def backward(self, G: np.ndarray) -> None:
        """Nothing: the overlap kernel has no parameters."""


class _TransformedOverlap(_Term):
    """:class:`common.kernels.TransformedOverlapKernel` with ``A = Σ_i w_i M_i``, ``W = Σ_i w_i``:
    the code's form ``exp(A / W)``, the paper's ``exp((A − W) / d)``; ``w = exp(raw)``."""

    def __init__(self, X: np.ndarray, weights: _Param, form: str) -> None:
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


KEPT_FACTORS = 2**21  # graph factors kept between passes up to this many entries (3 × 16 MiB)


class _FrequencyModulated(_Term):
    """BO-FM's ModLap kernel (:class:`common.fm_kernel.FMKernel`): ``K = Π_p f_p(t_p)`` over the
    graphs, ``t_p = 1 + (α_p / P) d²``, ``d² = Σ_j (x_j − x'_j)² / ℓ_j² / D_c``; each factor's
    derivatives in ``t`` and in its ``β_p`` are closed forms of its normalised spectrum, and
    ``∂K/∂θ = K Σ_p (∂f_p/∂θ) / f_p``.

    Without continuous columns ``t = 1`` and each factor is a table of node pairs, so
    ``K = exp(O L Oᵀ)`` with ``O`` the training rows' one-hot nodes of every graph and ``L`` the
    block-diagonal log tables, and ``∂L/∂β_p = Σ_ab (∂ log T_p/∂β)[a, b] (Oᵀ (G ⊙ K) O)[a, b]``:
    matrix products whose cost grows with the number of nodes, not with ``n²`` per graph. With
    continuous columns the factors and their derivatives are kept for the backward pass up to
    :data:`KEPT_FACTORS` entries and recomputed there beyond, so the memory stays bounded
    whatever the number of graphs and observations."""

    def __init__(self, kernel, X: np.ndarray, beta: _Param, alpha, lengthscale) -> None:
        self.beta, self.alpha, self.lengthscale = beta, alpha, lengthscale
        self.P = len(kernel.graph_cols)
        cont = list(kernel.cont_cols)
        if cont:
            self.D = _SquaredDistances(X[:, cont])
        self.graphs = []  # (n, training nodes, spectrum) per graph (:func:`graph_factor`)
        for p, col in enumerate(kernel.graph_cols):
            n = kernel.n_nodes[p]
            nodes = np.clip(np.round(X[:, col]), 0, n - 1).astype(int)
            self.graphs.append((n, nodes, graph_spectrum(kernel, p)))
        if alpha is None:
            onehots = [np.eye(n)[nodes] for n, nodes, *_ in self.graphs]
            self.onehot = np.concatenate(onehots, 1)  # (N, Σ n_p)
            self.offsets = np.cumsum([0] + [n for n, *_ in self.graphs])

    def _factor(self, p: int, v: np.ndarray, w: np.ndarray, t, beta: float):
        """``f``, ``∂f/∂t``, ``∂f/∂β`` of graph ``p`` between nodes ``v`` and ``w`` at ``t``."""
        n, _, spectrum = self.graphs[p]
        return graph_factor(v, w, t, beta, n, spectrum, with_beta=True)

    def _t(self, p: int):
        return 1.0 + self.a[p] * self.d2 if self.alpha is not None else 1.0

    def forward(self) -> np.ndarray:
        beta = self.beta.value()
        if self.alpha is None:
            return self._forward_tables(beta)
        self.inv_sq = 1.0 / self.lengthscale.value() ** 2
        self.d2 = self.D.combined(self.inv_sq) / len(self.D)
        self.a = self.alpha.value() / self.P
        n = len(self.d2)
        keep = self.P * n * n <= KEPT_FACTORS  # else recomputed in the backward pass
        K, self.kept = 1.0, []
        for p, (_, nodes, *_rest) in enumerate(self.graphs):
            factor = self._factor(p, nodes, nodes, self._t(p), float(beta[p]))
            K = K * factor[0]
            if keep:
                self.kept.append(factor)
        self.K = K
        return K

    def _forward_tables(self, beta: np.ndarray) -> np.ndarray:
        tiny = np.finfo(float).tiny
        logs, self.log_slopes = [], []
        for p, (n, *_rest) in enumerate(self.graphs):
            everyone = np.arange(n)
            f, _, df_dbeta = self._factor(p, everyone, everyone, 1.0, float(beta[p]))
            f = np.maximum(f, tiny)
            logs.append(np.log(f))
            self.log_slopes.append(df_dbeta / f)
        left = np.concatenate(
            [log[nodes] for log, (_, nodes, *_rest) in zip(logs, self.graphs, strict=True)], 1
        )
        self.K = np.exp(left @ self.onehot.T)
        return self.K

    def backward(self, G: np.ndarray) -> None:
        GK = G * self.K
        if self.alpha is None:
            pooled = self.onehot.T @ GK @ self.onehot  # (Σ n_p, Σ n_p)
            lo, hi = self.offsets[:-1], self.offsets[1:]
            grads = [
                np.vdot(slope, pooled[a:b, a:b])
                for slope, a, b in zip(self.log_slopes, lo, hi, strict=True)
            ]
            self.beta.add_value_grad(np.array(grads))
            return
        beta = self.beta.value()
        GK_d2 = GK * self.d2
        grad_beta, grad_alpha = np.zeros(self.P), np.zeros(self.P)
        W = np.zeros_like(GK)  # ∂L/∂d²
        for p, (_, nodes, *_rest) in enumerate(self.graphs):
            if self.kept:
                f, df_dt, df_dbeta = self.kept[p]
            else:
                f, df_dt, df_dbeta = self._factor(p, nodes, nodes, self._t(p), float(beta[p]))
            f = np.maximum(f, np.finfo(float).tiny)
            r_t = df_dt / f
            grad_beta[p] = np.vdot(GK, df_dbeta / f)
            grad_alpha[p] = np.vdot(GK_d2, r_t) / self.P
            W += self.a[p] * GK * r_t
        self.beta.add_value_grad(grad_beta)
        self.alpha.add_value_grad(grad_alpha)
        ls = self.lengthscale.value()
        self.lengthscale.add_value_grad(-2.0 * self.D.weighted(W) / (len(self.D) * ls**3))


# ---------------------------------------------------------------------- priors
def _log_prior(prior) -> Callable[[np.ndarray], tuple[float, np.ndarray]] | None:
    """``x ↦ (Σ log p(x), ∂/∂x)`` for a gpytorch Gamma, log-normal, normal or horseshoe prior,
    or BO-FM's inverse gamma (none with a transform of its own)."""
    from gpytorch.priors import GammaPrior, HorseshoePrior, LogNormalPrior, NormalPrior

    from common.fm_kernel import InverseGammaPrior

    if getattr(prior, "_transform", None) is not None:
        return None

    if type(prior) is GammaPrior:
        a, b = float(prior.concentration), float(prior.rate)
        const = a * math.log(b) - math.lgamma(a)

        def gamma(x):
            return float(np.sum(const + (a - 1) * np.log(x) - b * x)), (a - 1) / x - b

        return gamma
    if type(prior) is LogNormalPrior:
        mu, sigma = float(prior.loc), float(prior.scale)

        def log_normal(x):
            z = (np.log(x) - mu) / sigma
            value = np.sum(-np.log(x) - math.log(sigma) - HALF_LOG_2PI - 0.5 * z * z)
            return float(value), (-1.0 - z / sigma) / x

        return log_normal
    if type(prior) is NormalPrior:
        mu, sigma = float(prior.loc), float(prior.scale)

        def normal(x):
            z = (x - mu) / sigma
            return float(np.sum(-math.log(sigma) - HALF_LOG_2PI - 0.5 * z * z)), -z / sigma

        return normal
    if type(prior) is HorseshoePrior:  # gpytorch's: the mean of the density's two bounds
        scale, K = float(prior.scale), prior.K

        def horseshoe(x):
            A = (scale / x) ** 2
            lb, ub = K / 2 * np.log1p(4 * A), K * np.log1p(2 * A)
            dA = -2.0 * A / x
            d_sum = K / 2 * 4 * dA / (1 + 4 * A) + K * 2 * dA / (1 + 2 * A)
            return float(np.sum(np.log((lb + ub) / 2))), d_sum / (lb + ub)

        return horseshoe
    if type(prior) is InverseGammaPrior:
        a, b = float(prior.concentration), float(prior.rate)
        const = a * math.log(b) - math.lgamma(a)

        def inverse_gamma(x):
            return float(np.sum(const - (a + 1) * np.log(x) - b / x)), -(a + 1) / x + b / x**2

        return inverse_gamma
    return None


# The parameter each registered prior is on, by the module's class name and the prior's name:
# (raw parameter, whether the prior sees the parameter's value or the raw parameter itself).
_PRIOR_TARGETS = {
    ("ScaleKernel", "outputscale_prior"): ("raw_outputscale", "value"),
    ("MaternKernel", "lengthscale_prior"): ("raw_lengthscale", "value"),
    ("HomoskedasticNoise", "noise_prior"): ("raw_noise", "value"),
    ("TransformedOverlapKernel", "log_weights_prior"): ("raw_weights", "raw"),
    ("ConstantMean", "mean_prior"): ("raw_constant", "value"),
    ("FMKernel", "alpha_prior"): ("raw_alpha", "value"),
    ("FMKernel", "beta_prior"): ("raw_beta", "value"),
    ("FMKernel", "ls_prior"): ("raw_ls", "value"),
}


# ---------------------------------------------------------------------- the objective
class AnalyticMAP:
    """The negative log posterior per observation of a model's raw hyper-parameters and its
    gradient, both as :class:`common.map_fit.MAPObjective` computes them (the same value and
    gradient to rounding), from numpy."""

    def __init__(self, model, log_params: Collection[str] = ()) -> None:
        from gpytorch.means import ConstantMean

        if getattr(model, "input_transform", None) is not None:
            raise _Unsupported
        if getattr(model, "outcome_transform", None) is not None:
            raise _Unsupported
        if not isinstance(model.mean_module, ConstantMean):
            raise _Unsupported
        self.X = model.train_inputs[0].detach().numpy()
        self.y = model.train_targets.detach().numpy()
        if self.X.ndim != 2 or self.y.ndim != 1:
            raise _Unsupported
        named = list(model.named_parameters())
        self.size = sum(p.numel() for _, p in named)
        self.params: dict[str, _Param] = {}
        start = 0
        for name, p in named:
            module_path, _, attr = name.rpartition(".")
            module = model.get_submodule(module_path)
            constraint = getattr(module, f"{attr}_constraint", None)
            self.params[name] = _Param(p, start, constraint)
            start += p.numel()
        flat = np.concatenate([p.detach().reshape(-1).numpy() for _, p in named])
        for param in self.params.values():
            param.load(flat)
        self._kernel_params: list[_Param] = []
        self.kernel = self._term(model.covar_module, "covar_module")
        self.noise = self.params["likelihood.noise_covar.raw_noise"]
        self.mean = self.params["mean_module.raw_constant"]
        self.priors = self._priors(model)
        self.log_params = [
            p for name, p in self.params.items() if name.rsplit(".")[-1] in log_params
        ]
        used = {id(p) for p in [*self._kernel_params, self.noise, self.mean]}
        if set(map(id, self.params.values())) != used:  # a parameter this module does not know
            raise _Unsupported

    @classmethod
    def for_model(cls, model, log_params: Collection[str] = ()) -> AnalyticMAP | None:
        """The analytic objective of ``model`` (parameters named in ``log_params`` with their
        log-Jacobian, as :class:`common.map_fit.MAPObjective`), or ``None`` where it has a part
        not covered."""
        try:
            return cls(model, log_params)
        except (_Unsupported, KeyError, AttributeError):
            return None

    # -------------------------------------------------------------- structure
    def _term(self, kernel, path: str) -> _Term:
        from gpytorch.kernels import MaternKernel, ScaleKernel

        from common.fm_kernel import FMKernel
        from common.kernels import MixtureKernel, OverlapKernel, TransformedOverlapKernel

        X = self.X
        if kernel.active_dims is not None:
            X = X[:, kernel.active_dims.numpy()]
        if type(kernel) is ScaleKernel:
            if not same_active_dims(kernel, kernel.base_kernel):
                raise _Unsupported
            scale = self._own(path, "raw_outputscale")
            return _Scale(self._term(kernel.base_kernel, f"{path}.base_kernel"), scale)
        if type(kernel) is MixtureKernel:
            mix = self._own(path, "raw_mix")
            cat = self._term(kernel.cat_kernel, f"{path}.cat_kernel")
            cont = self._term(kernel.cont_kernel, f"{path}.cont_kernel")
            if kernel.active_dims is not None:  # the parts select their columns themselves
                raise _Unsupported
            return _Mixture(cat, cont, mix)
        if type(kernel) is MaternKernel and kernel.nu == 2.5:
            if kernel.batch_shape != torch.Size([]):
                raise _Unsupported
            return _Matern52(X, self._own(path, "raw_lengthscale"))
        if type(kernel) is OverlapKernel:
            return _Overlap(X)
        if type(kernel) is FMKernel:
            alpha = self._own(path, "raw_alpha") if kernel.cont_cols else None
            ls = self._own(path, "raw_ls") if kernel.cont_cols else None
            return _FrequencyModulated(kernel, X, self._own(path, "raw_beta"), alpha, ls)
        if type(kernel) is TransformedOverlapKernel:
            return _TransformedOverlap(X, self._own(path, "raw_weights"), kernel.form)
        raise _Unsupported

    def _own(self, path: str, attr: str) -> _Param:
        param = self.params[f"{path}.{attr}"]
        self._kernel_params.append(param)
        return param

    def _priors(self, model) -> list[tuple[_Param, str, Callable]]:
        priors = []
        for name, module, prior, closure, _ in model.named_priors():
            module_path, _, prior_name = name.rpartition(".")
            target = _PRIOR_TARGETS.get((type(module).__name__, prior_name))
            log_prior = _log_prior(prior)
            if target is None or log_prior is None:
                raise _Unsupported
            attr, seen_as = target
            param = self.params[f"{module_path}.{attr}" if module_path else attr]
            expected = param.value if seen_as == "value" else (lambda p=param: p.raw)
            with torch.no_grad():  # the closure must be what this table says it is
                seen = closure(module).detach().reshape(-1).numpy()
            if seen.shape != expected().shape or not np.allclose(seen, expected(), rtol=1e-9):
                raise _Unsupported
            priors.append((param, seen_as, log_prior))
        return priors

    # -------------------------------------------------------------- evaluation
    def __call__(self, raw: np.ndarray) -> tuple[float, np.ndarray]:
        """The loss and its gradient in the raw parameters ``raw`` (``named_parameters``
        order); raises ``numpy.linalg.LinAlgError`` where the covariance is not positive
        definite."""
        for param in self.params.values():
            param.load(raw)
        n = len(self.y)
        K = self.kernel.forward()
        K = K + np.diag(np.full(n, float(self.noise.value()[0])))
        L, info = lapack.dpotrf(K, lower=1, clean=1, overwrite_a=0)
        if info != 0:
            raise np.linalg.LinAlgError("covariance not positive definite")
        r = self.y - float(self.mean.value()[0])
        alpha, _ = lapack.dpotrs(L, r, lower=1)
        inverse, info = lapack.dpotri(L, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("covariance not invertible")
        inverse = inverse + inverse.T  # dpotri fills the lower triangle (L's upper one is 0)
        inverse[np.diag_indices(n)] *= 0.5
        loss = 0.5 * float(r @ alpha) + float(np.log(np.diag(L)).sum())
        G = 0.5 * (inverse - np.outer(alpha, alpha))
        self.kernel.backward(G)
        self.noise.add_value_grad(float(np.trace(G)))
        self.mean.add_value_grad(-float(alpha.sum()))
        for param, seen_as, log_prior in self.priors:
            x = param.value() if seen_as == "value" else param.raw
            value, grad = log_prior(x)
            loss -= value
            if seen_as == "value":
                param.add_value_grad(-grad)
            else:
                param.grad_raw = param.grad_raw - grad
        for param in self.log_params:  # value = exp(raw) + floor: log |d value / d raw| = raw
            loss -= float(param.raw.sum())
            param.grad_raw = param.grad_raw - 1.0
        grad = np.zeros(self.size)
        for param in self.params.values():
            grad[param.start : param.stop] = param.gradient()
        if not math.isfinite(loss):
            raise np.linalg.LinAlgError("non-finite objective")
        return loss / n, grad / n
