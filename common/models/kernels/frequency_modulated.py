"""Frequency-modulated kernels on mixed inputs: BO-FM's ModLap kernel and its graphs.

Oh, Gavves, Welling. "Mixed variable Bayesian optimization with frequency modulated kernels",
UAI 2021; also C. Oh, "Bayesian optimization on non-conventional search spaces", PhD thesis,
University of Amsterdam, 2023, ch. 5 and App. C.

Every discrete parameter is a graph on its values: a complete graph for a categorical
(nominal), a path graph for an integer with few values (ordinal), or a graph the user supplies.
With ``L_p = U_p Λ_p U_pᵀ`` the Laplacian of graph ``p`` and ``d²`` one ARD squared distance of
the continuous parts, shared by all factors, the ModLap kernel is

    k((c, v), (c', v')) = Π_p Σ_i U_p[v_p, i] U_p[v'_p, i] / (1 + β_p λ_pi + (α_p / P) d² / D_c)

(the reference scales α by the number ``P`` of graphs and ``d²`` by the number ``D_c`` of
continuous columns; each factor is divided by its mean diagonal value at ``d = 0``, a positive
constant the output scale absorbs). Complete graphs use the closed form
``(g(0) − g(n)) / n + 1[v = v'] g(n)``; other graphs use their Laplacian's eigendecomposition,
computed once per graph and cached, grouped by distinct eigenvalue.

>>> layout = FMLayout.from_space(space)
>>> kernel = ScaleKernel(FMKernel(layout))
>>> K = kernel(layout.to_model(space.encode(configs))).to_dense()
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gpytorch.constraints import GreaterThan
from gpytorch.kernels import Kernel
from gpytorch.priors import HorseshoePrior, Prior
from torch.nn import Module as TModule

from common.models.kernels.dense import pairwise_products
from common.models.kernels.fast_forms import (
    CrossPart,
    MAPParameter,
    MAPTerm,
    SquaredDistances,
    register,
)
from common.space.mixed_space import Categorical, Integer, MixedSpace

# Integers with at most this many values are ordinal graph nodes (a path graph); larger ranges stay
# continuous columns inside the shared ARD distance and are rounded on decoding. 20 is BoTorch's
# MAX_DISCRETE_VALUES for its mixed optimiser too: above it a path graph's O(|V|) cost per kernel
# entry grows, and hill climbing by ±1 steps needs many rounds to cross the range.
PATH_GRAPH_MAX_VALUES = 20

# The reference's priors are stated for z-scored continuous inputs; ours live in [0, 1], where a
# uniform coordinate has standard deviation 1/√12. Lengthscale priors and initial ranges are
# rescaled by that factor.
UNIT_SCALE = 1.0 / math.sqrt(12.0)
ALPHA_PRIOR_SCALE = 0.1  # half-horseshoe on α (modulation strength)
BETA_PRIOR_SCALE = 2.0  # half-horseshoe on β (frequency decay, ARD over graphs)
LENGTHSCALE_PRIOR = (2.0, 0.5 * UNIT_SCALE)  # inverse gamma (concentration, rate)
_MIN_POSITIVE = 1e-6


# ---------------------------------------------------------------------------------------- priors
class InverseGammaPrior(Prior):
    """Inverse-gamma prior ``p(x) ∝ x^(−a−1) exp(−b / x)`` (BO-FM's lengthscale and noise prior)."""

    arg_constraints: dict = {}
    support = torch.distributions.constraints.positive
    _validate_args = False

    def __init__(self, concentration: float, rate: float, transform=None):
        TModule.__init__(self)
        concentration_t = torch.as_tensor(float(concentration))
        rate_t = torch.as_tensor(float(rate))
        super().__init__(concentration_t.shape, validate_args=False)
        self.register_buffer("concentration", concentration_t)
        self.register_buffer("rate", rate_t)
        self._transform = transform

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        x = self.transform(x)
        a, b = self.concentration.to(x), self.rate.to(x)
        return a * torch.log(b) - torch.lgamma(a) - (a + 1) * torch.log(x) - b / x

    def rsample(self, sample_shape=torch.Size()):  # noqa: B008 - torch's own signature
        gamma = torch.distributions.Gamma(self.concentration, self.rate)
        return 1.0 / gamma.rsample(sample_shape)

    def expand(self, batch_shape):
        return InverseGammaPrior(float(self.concentration), float(self.rate))


def log_positive(lower: float = _MIN_POSITIVE) -> GreaterThan:
    """A ``> lower`` constraint parameterised in log space (scale-like hyper-parameters)."""
    return GreaterThan(lower, transform=torch.exp, inv_transform=torch.log)


# ---------------------------------------------------------------------------------------- graphs
@dataclass(frozen=True, eq=False)
class Graph:
    """An undirected graph on the ``n`` values of one discrete parameter (COMBO / BO-FM).

    ``kind`` is ``"complete"`` (closed form: no eigendecomposition, nothing of size n² stored) or
    ``"spectral"`` (path and user graphs: the Laplacian's eigenpairs grouped by distinct
    eigenvalue into spectral projectors, computed once per graph and cached).
    ``neighbours_of(v)`` are the values adjacent to ``v``: the moves of the hill climb.
    """

    n: int
    kind: str
    weights: np.ndarray | None = field(default=None, repr=False)  # adjacency, spectral graphs
    eigenvalues: np.ndarray | None = field(default=None, repr=False)  # (G,) distinct, ascending
    projectors: np.ndarray | None = field(default=None, repr=False)  # (G, n, n), Σ_g P_g = I
    _neighbours: tuple[np.ndarray, ...] = field(default=(), repr=False)

    @staticmethod
    def complete(n: int) -> Graph:
        """The complete graph K_n of a nominal parameter: every pair of values is adjacent."""
        return _complete(int(n))

    @staticmethod
    def path(n: int) -> Graph:
        """The path graph P_n of an ordinal parameter: value ``i`` is adjacent to ``i ± 1``."""
        A = np.zeros((int(n), int(n)))
        idx = np.arange(int(n) - 1)
        A[idx, idx + 1] = A[idx + 1, idx] = 1.0
        return _spectral(A.tobytes(), int(n))

    @staticmethod
    def from_adjacency(adjacency: Any) -> Graph:
        """A user graph from a symmetric, non-negative ``(n, n)`` adjacency (weights allowed)."""
        A = np.array(adjacency, dtype=float)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1:
            raise ValueError(f"an adjacency must be a square matrix, got shape {A.shape}.")
        if not np.all(np.isfinite(A)) or np.any(A < 0) or not np.allclose(A, A.T):
            raise ValueError("an adjacency must be symmetric, finite and non-negative.")
        np.fill_diagonal(A, 0.0)
        return _spectral(((A + A.T) / 2).tobytes(), A.shape[0])

    @property
    def adjacency(self) -> np.ndarray:
        """The ``(n, n)`` adjacency matrix (built on demand for a complete graph)."""
        if self.kind == "complete":
            return np.ones((self.n, self.n)) - np.eye(self.n)
        return self.weights

    def neighbours_of(self, v: int) -> np.ndarray:
        """The values adjacent to value ``v``."""
        if self.kind == "complete":
            return np.delete(np.arange(self.n), int(v))
        return self._neighbours[int(v)]

    def key(self) -> tuple:
        """Hashable identity (for caches keyed by the model's structure)."""
        if self.kind == "complete":
            return (self.kind, self.n)
        return (self.kind, self.n, self.weights.tobytes())


@functools.lru_cache(maxsize=64)
def _complete(n: int) -> Graph:
    return Graph(n, "complete")


@functools.lru_cache(maxsize=64)
def _spectral(adjacency: bytes, n: int) -> Graph:
    """Eigendecompose a Laplacian once and group the eigenpairs by distinct eigenvalue."""
    A = np.frombuffer(adjacency, dtype=float).reshape(n, n).copy()
    lam, U = np.linalg.eigh(np.diag(A.sum(1)) - A)
    lam = np.clip(lam, 0.0, None)  # round-off below zero
    tol = 1e-8 * max(1.0, float(lam.max(initial=0.0)))
    groups: list[list[int]] = []
    for i in range(n):
        if groups and lam[i] - lam[groups[-1][0]] <= tol:
            groups[-1].append(i)
        else:
            groups.append([i])
    eigenvalues = np.array([lam[g].mean() for g in groups])
    projectors = np.stack([U[:, g] @ U[:, g].T for g in groups])
    neighbours = tuple(np.flatnonzero(A[v] > 0) for v in range(n))
    return Graph(n, "spectral", A, eigenvalues, projectors, neighbours)


# ---------------------------------------------------------------------------------------- layout
@dataclass(frozen=True, eq=False)
class FMLayout:
    """Which model columns are continuous and which are graph nodes, and the maps to and from them.

    Columns keep the positions of :class:`MixedSpace`'s encoding. Categoricals are graph columns
    holding the choice index; integers with at most ``PATH_GRAPH_MAX_VALUES`` values (or with a user
    graph) are graph columns holding the value's index ``0..n-1``; floats and larger integers stay
    continuous columns in [0, 1].
    """

    dim: int
    cont_cols: tuple[int, ...]
    graph_cols: tuple[int, ...]
    graphs: tuple[Graph, ...]
    _ints: tuple[tuple[int, Integer], ...] = ()  # (column, parameter) of integers mapped to nodes

    @classmethod
    def from_space(
        cls,
        space: MixedSpace,
        graphs: Mapping[str, Any] | None = None,
        max_path_values: int = PATH_GRAPH_MAX_VALUES,
    ) -> FMLayout:
        """The layout of ``space``; ``graphs`` maps parameter names to user adjacency matrices."""
        graphs = dict(graphs or {})
        cont, gcols, gs, ints = [], [], [], []
        for j, p in enumerate(space.modelled):
            user = graphs.pop(p.name, None)
            if isinstance(p, Categorical):
                n = len(p.choices)
            elif isinstance(p, Integer) and (user is not None or p.n_values <= max_path_values):
                n = p.n_values
                ints.append((j, p))
            else:
                if user is not None:
                    raise ValueError(f"{p.name}: graphs are for discrete parameters only.")
                cont.append(j)
                continue
            if user is None:
                graph = Graph.complete(n) if isinstance(p, Categorical) else Graph.path(n)
            else:
                graph = user if isinstance(user, Graph) else Graph.from_adjacency(user)
                if graph.n != n:
                    raise ValueError(f"{p.name}: the graph has {graph.n} nodes for {n} values.")
            gcols.append(j)
            gs.append(graph)
        unknown = [name for name in graphs if name not in space.fixed]
        if unknown:
            raise ValueError(f"graphs given for unknown parameters: {unknown}.")
        return cls(space.dim, tuple(cont), tuple(gcols), tuple(gs), tuple(ints))

    def key(self) -> tuple:
        return (self.dim, self.cont_cols, self.graph_cols, tuple(g.key() for g in self.graphs))

    @property
    def n_nodes(self) -> np.ndarray:
        return np.array([g.n for g in self.graphs], dtype=int)

    def to_model(self, X: np.ndarray) -> np.ndarray:
        """Space encodings (rows of :meth:`MixedSpace.encode`) to model rows (integer nodes)."""
        Z = np.array(X, dtype=float, copy=True).reshape(-1, self.dim)
        for j, p in self._ints:
            Z[:, j] = _int_nodes(p, Z[:, j])
        for j, g in zip(self.graph_cols, self.graphs, strict=True):
            Z[:, j] = np.clip(np.round(Z[:, j]), 0, g.n - 1)
        return Z

    def to_space(self, Z: np.ndarray) -> np.ndarray:
        """Model rows back to space encodings (integer nodes to the centres of their cells)."""
        X = np.array(Z, dtype=float, copy=True).reshape(-1, self.dim)
        for j, g in zip(self.graph_cols, self.graphs, strict=True):
            X[:, j] = np.clip(np.round(X[:, j]), 0, g.n - 1)
        for j, p in self._ints:
            X[:, j] = _int_units(p, X[:, j])
        if self.cont_cols:
            cols = list(self.cont_cols)
            X[:, cols] = np.clip(X[:, cols], 0.0, 1.0)
        return X

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` uniformly random model rows (continuous columns uniform, nodes uniform)."""
        Z = rng.random((n, self.dim))
        for j, g in zip(self.graph_cols, self.graphs, strict=True):
            Z[:, j] = rng.integers(0, g.n, size=n)
        return Z


def _int_nodes(p: Integer, u: np.ndarray) -> np.ndarray:
    """The grid index ``0..n-1`` of an integer from its [0, 1] encoding (half-step padded cells)."""
    n = p.n_values
    u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
    if not p.log:  # every value owns an equal cell of width 1/n
        return np.clip(np.floor(u * n), 0, n - 1)
    lo, hi = math.log(p.low - 0.5), math.log(p.low + n - 0.5)  # log integers have step 1
    return np.clip(np.round(np.exp(lo + u * (hi - lo))) - p.low, 0, n - 1)


def _int_units(p: Integer, k: np.ndarray) -> np.ndarray:
    """The [0, 1] encoding of an integer's grid index ``k`` (the centre of its cell)."""
    n = p.n_values
    if not p.log:
        return (np.asarray(k, dtype=float) + 0.5) / n
    lo, hi = math.log(p.low - 0.5), math.log(p.low + n - 0.5)
    return (np.log(p.low + np.asarray(k, dtype=float)) - lo) / (hi - lo)


# ---------------------------------------------------------------------------------------- kernel
class FMKernel(Kernel):
    """BO-FM's ModLap kernel: graph Fourier frequencies modulated by one shared continuous distance.

    Inputs are model rows of ``layout`` (see :class:`FMLayout`). Hyper-parameters, with the
    reference's MAP priors: ``alpha`` (per graph, half-horseshoe 0.1), ``beta`` (per graph,
    half-horseshoe 2.0) and ``ls`` (per continuous column, inverse gamma). It satisfies FM-P1..P3:
    positive definite, and never increasing with the continuous distance for fixed discrete values.
    """

    has_lengthscale = False

    def __init__(self, layout: FMLayout, **kwargs):
        if not layout.graphs:
            raise ValueError("FMKernel needs at least one discrete (graph) column.")
        super().__init__(**kwargs)
        self.cont_cols = list(layout.cont_cols)
        self.graph_cols = list(layout.graph_cols)
        self.n_nodes = [g.n for g in layout.graphs]
        self.complete = [g.kind == "complete" for g in layout.graphs]
        n_graphs, n_cont = len(layout.graphs), len(layout.cont_cols)
        for p, g in enumerate(layout.graphs):
            if g.kind == "spectral":
                mult = np.einsum("gii->g", g.projectors)  # multiplicity of each eigenvalue
                for name, value in (("eig", g.eigenvalues), ("proj", g.projectors), ("mult", mult)):
                    self.register_buffer(f"{name}_{p}", torch.as_tensor(value, dtype=torch.float64))
        self.register_parameter("raw_beta", torch.nn.Parameter(torch.zeros(n_graphs)))
        self.register_constraint("raw_beta", log_positive())
        self.register_prior("beta_prior", HorseshoePrior(BETA_PRIOR_SCALE), _get_beta, _set_beta)
        self.beta = torch.ones(n_graphs)
        if n_cont:
            self.register_parameter("raw_alpha", torch.nn.Parameter(torch.zeros(n_graphs)))
            self.register_constraint("raw_alpha", log_positive())
            self.register_prior(
                "alpha_prior", HorseshoePrior(ALPHA_PRIOR_SCALE), _get_alpha, _set_alpha
            )
            self.register_parameter("raw_ls", torch.nn.Parameter(torch.zeros(n_cont)))
            self.register_constraint("raw_ls", log_positive())
            self.register_prior("ls_prior", InverseGammaPrior(*LENGTHSCALE_PRIOR), _get_ls, _set_ls)
            self.alpha = torch.ones(n_graphs)
            self.ls = torch.full((n_cont,), 0.2)

    # --------------------------------------------------------------- hyper-parameters
    @property
    def beta(self) -> torch.Tensor:
        return self.raw_beta_constraint.transform(self.raw_beta)

    @beta.setter
    def beta(self, value) -> None:
        _set_beta(self, value)

    @property
    def alpha(self) -> torch.Tensor:
        return self.raw_alpha_constraint.transform(self.raw_alpha)

    @alpha.setter
    def alpha(self, value) -> None:
        _set_alpha(self, value)

    @property
    def ls(self) -> torch.Tensor:
        """ARD lengthscales θ of the continuous columns (in [0, 1] units)."""
        return self.raw_ls_constraint.transform(self.raw_ls)

    @ls.setter
    def ls(self, value) -> None:
        _set_ls(self, value)

    # --------------------------------------------------------------- covariance
    def forward(self, x1, x2, diag: bool = False, last_dim_is_batch: bool = False, **params):
        if last_dim_is_batch:
            raise NotImplementedError("FMKernel does not support last_dim_is_batch.")
        n_graphs = len(self.graph_cols)
        if not self.cont_cols:
            return self._discrete_forward(x1, x2, diag)
        c1 = x1[..., self.cont_cols] / self.ls
        c2 = x2[..., self.cont_cols] / self.ls
        d2 = self.covar_dist(c1, c2, diag=diag, square_dist=True) / len(self.cont_cols)
        modulation = self.alpha / n_graphs
        beta = self.beta
        result = None
        for p, col in enumerate(self.graph_cols):
            v1 = x1[..., col].round().long().clamp(0, self.n_nodes[p] - 1)
            v2 = x2[..., col].round().long().clamp(0, self.n_nodes[p] - 1)
            if not diag:
                v1, v2 = v1.unsqueeze(-1), v2.unsqueeze(-2)
            t = 1.0 + modulation[p] * d2  # one modulation of the shared distance per graph
            factor = self._factor(p, v1, v2, t, beta[p])
            result = factor if result is None else result * factor
        return result

    def _discrete_forward(self, x1, x2, diag: bool) -> torch.Tensor:
        """The kernel without continuous columns, as ``exp(Σ_p log T_p[v_p, v'_p])``.

        With no distance to modulate, graph ``p``'s factor is a fixed ``n_p × n_p`` table
        ``T_p`` (positive: ``(I + βL)⁻¹`` of a connected graph is), so the product over graphs
        is the exponential of one matrix product: each row of ``x1`` as the concatenated rows
        ``log T_p[v_p, :]``, each row of ``x2`` as concatenated one-hot vectors. One
        ``(n₁ × Σn_p) · (Σn_p × n₂)`` product replaces ``P`` gathers and products on
        ``n₁ × n₂`` tensors (25 categoricals: the acquisition's posterior got several times
        faster).
        """
        one = torch.ones((), dtype=x1.dtype, device=x1.device)
        logs, rows, cols = [], [], []
        for p, col in enumerate(self.graph_cols):
            n = self.n_nodes[p]
            nodes = torch.arange(n, device=x1.device)
            table = self._factor(p, nodes[:, None], nodes[None, :], one, self.beta[p])
            logs.append(table.clamp_min(torch.finfo(table.dtype).tiny).log())
            rows.append(x1[..., col].round().long().clamp(0, n - 1))
            cols.append(x2[..., col].round().long().clamp(0, n - 1))
        if diag:
            total = sum(log[v1, v2] for log, v1, v2 in zip(logs, rows, cols, strict=True))
            return total.exp()
        left = torch.cat([log[v1] for log, v1 in zip(logs, rows, strict=True)], dim=-1)
        right = torch.cat(
            [
                torch.nn.functional.one_hot(v2, n).to(left.dtype)
                for v2, n in zip(cols, self.n_nodes, strict=True)
            ],
            dim=-1,
        )
        return pairwise_products(left, right).exp()

    def _factor(self, p: int, v1, v2, t, beta) -> torch.Tensor:
        """One graph's factor, divided by its mean diagonal value at ``d = 0``."""
        n = self.n_nodes[p]
        if self.complete[p]:
            # K_n has eigenvalue 0 (eigenvector 1/√n) and n (multiplicity n − 1), so
            # U g(Λ) Uᵀ = (g(0) − g(n)) / n + 1[v = v'] g(n); its mean diagonal at d = 0 is
            # (1 + (n − 1) / (1 + βn)) / n.
            sign = (v1 == v2).to(t.dtype) * n - 1.0  # n − 1 on the diagonal, −1 off it
            c = beta * n
            value = t.reciprocal() + sign * (t + c).reciprocal()
            return value / (1.0 + (n - 1) / (1.0 + c))
        eig, proj, mult = (getattr(self, f"{k}_{p}") for k in ("eig", "proj", "mult"))
        value = proj[0][v1, v2] / (t + beta * eig[0])
        for g in range(1, eig.shape[0]):
            value = value + proj[g][v1, v2] / (t + beta * eig[g])
        return value / ((mult / (1.0 + beta * eig)).sum() / n)


def graph_factor(v, w, t, beta: float, n: int, spectrum=None, with_beta: bool = False):
    """:meth:`FMKernel._factor` in numpy with its derivatives, for the closed-form fit and
    acquisition (:mod:`common.models.analytic_map`, :mod:`common.models.cross_covariance`): graph
    ``p``'s factor between node arrays ``v`` (``m``) and ``w`` (``k``) at ``t`` (a scalar or ``(m,
    k)``), and
    ``∂f/∂t`` (and ``∂f/∂β`` with ``with_beta``). ``spectrum`` is ``None`` for a complete graph
    (``(1/t + s/(t + βn)) / norm``, ``s = n − 1`` on the diagonal, ``−1`` off it), else the
    graph's ``(eigenvalues, multiplicities, projectors)`` (``Σ_g P_g[v, w] / (t + β λ_g) /
    norm``); ``norm`` is the mean diagonal value at ``t = 1``."""
    if spectrum is None:
        sign = (v[:, None] == w[None, :]) * float(n) - 1.0
        c = beta * n
        norm = 1.0 + (n - 1) / (1.0 + c)
        f = (1.0 / t + sign / (t + c)) / norm
        df_dt = (-1.0 / t**2 - sign / (t + c) ** 2) / norm
        if not with_beta:
            return f, df_dt
        d_norm = -(n - 1) * n / (1.0 + c) ** 2
        return f, df_dt, -sign * n / (t + c) ** 2 / norm - f * d_norm / norm
    eig, mult, proj = spectrum
    pairs = proj[:, v[:, None], w[None, :]]  # (G, m, k)
    inverse = 1.0 / (np.asarray(t, dtype=float) + beta * eig[:, None, None])
    norm = float((mult / (1.0 + beta * eig)).sum() / n)
    weighted = pairs * inverse**2
    f = (pairs * inverse).sum(0) / norm
    df_dt = -weighted.sum(0) / norm
    if not with_beta:
        return f, df_dt
    d_norm = float(-(mult * eig / (1.0 + beta * eig) ** 2).sum() / n)
    by_eig = (eig @ weighted.reshape(len(eig), -1)).reshape(weighted.shape[1:])
    return f, df_dt, -by_eig / norm - f * d_norm / norm


def graph_spectrum(kernel: FMKernel, p: int):
    """``None`` for graph ``p`` of ``kernel`` if it is complete, else its ``(eigenvalues,
    multiplicities, projectors)`` as numpy arrays (what :func:`graph_factor` takes)."""
    if kernel.complete[p]:
        return None
    return tuple(getattr(kernel, f"{k}_{p}").numpy() for k in ("eig", "mult", "proj"))


def _get_beta(kernel: FMKernel) -> torch.Tensor:
    return kernel.beta


def _get_alpha(kernel: FMKernel) -> torch.Tensor:
    return kernel.alpha


def _get_ls(kernel: FMKernel) -> torch.Tensor:
    return kernel.ls


def _set_beta(kernel: FMKernel, value) -> None:
    _set_positive(kernel, "raw_beta", value)


def _set_alpha(kernel: FMKernel, value) -> None:
    _set_positive(kernel, "raw_alpha", value)


def _set_ls(kernel: FMKernel, value) -> None:
    _set_positive(kernel, "raw_ls", value)


def _set_positive(kernel: FMKernel, name: str, value) -> None:
    raw = getattr(kernel, name)
    value = torch.as_tensor(value, dtype=raw.dtype, device=raw.device).expand_as(raw)
    constraint = getattr(kernel, f"{name}_constraint")
    floor = constraint.lower_bound.to(raw) * (1 + 1e-6) + 1e-12
    kernel.initialize(**{name: constraint.inverse_transform(torch.maximum(value, floor))})


# ---------------------------------------------------------------------- fast forms
KEPT_FACTORS = 2**21  # graph factors kept between passes up to this many entries (3 × 16 MiB)


class _FrequencyModulatedTerm(MAPTerm):
    """BO-FM's ModLap kernel (:class:`common.models.kernels.frequency_modulated.FMKernel`): ``K =
    Π_p f_p(t_p)`` over the graphs, ``t_p = 1 + (α_p / P) d²``, ``d² = Σ_j (x_j − x'_j)² / ℓ_j² /
    D_c``; each factor's derivatives in ``t`` and in its ``β_p`` are closed forms of its normalised
    spectrum, and
    ``∂K/∂θ = K Σ_p (∂f_p/∂θ) / f_p``.

    Without continuous columns ``t = 1`` and each factor is a table of node pairs, so
    ``K = exp(O L Oᵀ)`` with ``O`` the training rows' one-hot nodes of every graph and ``L`` the
    block-diagonal log tables, and ``∂L/∂β_p = Σ_ab (∂ log T_p/∂β)[a, b] (Oᵀ (G ⊙ K) O)[a, b]``:
    matrix products whose cost grows with the number of nodes, not with ``n²`` per graph. With
    continuous columns the factors and their derivatives are kept for the backward pass up to
    :data:`KEPT_FACTORS` entries and recomputed there beyond, so the memory stays bounded
    whatever the number of graphs and observations."""

    def __init__(self, kernel, X: np.ndarray, beta: MAPParameter, alpha, lengthscale) -> None:
        self.beta, self.alpha, self.lengthscale = beta, alpha, lengthscale
        self.P = len(kernel.graph_cols)
        cont = list(kernel.cont_cols)
        if cont:
            self.D = SquaredDistances(X[:, cont])
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


class _Graph:
    """One graph of the ModLap kernel with its fitted ``β``
    (:func:`common.models.kernels.frequency_modulated.graph_factor`)."""

    def __init__(self, kernel, p: int) -> None:
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
        return graph_factor(v, w, t, self.beta, self.n, self.spectrum)


class _FrequencyModulatedPart(CrossPart):
    """BO-FM's ModLap kernel (:class:`common.models.kernels.frequency_modulated.FMKernel`): ``k =
    Π_p f_p(v_p, v'_p, t_p)`` with ``t_p = 1 + a_p d²`` and ``d²`` the shared scaled squared
    distance of the continuous columns, so ``∂k/∂d² = k Σ_p a_p f_p'(t_p) / f_p``. Graph columns
    (nodes) have no gradient. Without continuous columns every factor is a fixed table of node
    pairs: ``k = exp(Σ_p log T_p[v_p, v'_p])``, one product of the candidates' rows of the log
    tables with the training rows' one-hot nodes (as
    :class:`common.models.kernels.frequency_modulated.FMKernel` computes it)."""

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


def _map_term(kernel, X, path: str, fit) -> MAPTerm:
    alpha = fit.own(path, "raw_alpha") if kernel.cont_cols else None
    ls = fit.own(path, "raw_ls") if kernel.cont_cols else None
    return _FrequencyModulatedTerm(kernel, X, fit.own(path, "raw_beta"), alpha, ls)


register(
    FMKernel,
    map_term=_map_term,
    cross_part=lambda kernel, X, dims, part_of: _FrequencyModulatedPart(kernel, X),
)
