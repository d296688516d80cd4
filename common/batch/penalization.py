"""PLAyBOOK: local penalisation of the acquisition around busy points (asynchronous batch BO).

Alvi, Ru, Calliess, Roberts, Osborne. "Asynchronous batch Bayesian optimisation with improved local
penalisation", ICML 2019; also A. S. Alvi, "Practical Bayesian optimisation for hyperparameter
tuning", DPhil thesis, University of Oxford, 2019, ch. 4, and B. Ru, "Bayesian Optimisation for
Automated Machine Learning", DPhil thesis, University of Oxford, 2022, ch. 4.

The acquisition, made non-negative, is multiplied by one penaliser per busy point ``x_j`` (a running
trial, or a point already picked for the same batch). Everything is computed in log space:

    log α₊(x) = log⁺ α(x) + Σ_j log φ(x | x_j)

with ``log⁺ α = log softplus(α)`` for an acquisition such as UCB and ``α`` itself for a
log-acquisition (LogEI). Penalisers, with ``r_j = (|μ(x_j) − M| + γ σ(x_j)) / L_j`` and ``M`` the
best observed model value:

- ``"hlp"`` (default), the hard local penaliser ``φ = ((d / r_j)^p + 1)^(1/p)``, p = −5, γ = 1: a
  smoothed cone, 0 at ``x_j`` and 1 beyond the radius. **Departure:** the radius is capped at
  ``MAX_RADIUS`` = 1 distance unit (one lengthscale, one category change). Early in a run the busy
  points are exploratory (``μ_j`` far below ``M``) and the posterior mean is flat, so ``r_j`` came
  out at 2–10 units: the cone covered the whole continuous box and the next suggestion was pushed
  to its edges (see docs/decisions.md). Beyond one lengthscale two points are weakly correlated,
  so nothing is lost.
- ``"lp"``, the local penaliser of González et al. ``φ = Φ((d − |μ_j − M| / L_j) / (σ_j / L_j))``.

**Distance on mixed inputs** (our choice, documented here):
``d(x, x')² = Σ_cont ((x_i − x'_i) / ℓ_i)² + Σ_disc hops_c(h_c, h'_c)²``, with ``ℓ`` the GP's
continuous ARD lengthscales and ``hops_c`` the shortest-path distance between two values in the
graph of discrete parameter ``c``: for a categorical (a complete graph, CoCaBO and CASMOPOLITAN)
that is the mismatch ``1[h_c ≠ h'_c]``, for BO-FM's path graphs of integers ``|i − i'|``. One
category change (one graph edge) is as far as one lengthscale. Continuous differences are measured
in lengthscale units, so the Lipschitz constant is taken with respect to the same coordinates.

**Lipschitz constant** ``L_j``: "local" (default) is the largest posterior-mean gradient norm in a
box of side two lengthscales centred at ``x_j`` (the box of Alvi's thesis, ch. 4; continuous dims,
at ``x_j``'s categories), together with the largest finite-difference slope to ``x_j``'s one-edge
neighbours (one category changed, or one step along a graph); "global" takes the largest of these
over the whole space (random points). **Departure:** the local constant is then taken over the
penalised ball itself (:func:`ball_lipschitz_constants`), the largest radius whose own ball's slope
justifies it. Near an optimum the mean is flat beside ``x_j`` and steep a lengthscale away, so the
box's slope made the radius of a busy point beside the incumbent a sliver.

**Minimum separation** (our addition): the cone ``φ ≈ d / r`` only multiplies the acquisition, and
log-EI beside the incumbent rises by more than the cone takes, so a batch could still stack points
a hundredth of the box apart (BO-FM did). Every candidate closer than ``MIN_SEPARATION`` of the
unit box to a busy point with the same discrete values also loses ``SEPARATION_SLOPE`` per unit of
the intrusion: a wall that keeps two running configurations at least that far apart, a fortieth
of each range where one parameter differs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from botorch.acquisition import AcquisitionFunction
from botorch.models.model import Model

from common.batch.busy import BusyPolicy
from common.models.gp import DTYPE

HLP_POWER = -5.0
HLP_GAMMA = 1.0
_N_LIPSCHITZ_POINTS = 64
_TINY = 1e-12
MAX_RADIUS = 1.0  # distance units: one lengthscale, one category change (see above)
MIN_SEPARATION = 0.025  # unit-box distance kept from every busy point (see above)
SEPARATION_SLOPE = 1e3  # log-acquisition lost per unit of that distance intruded


def continuous_lengthscales(model: Model, n_cont: int) -> torch.Tensor:
    """The ARD lengthscales of the (first) continuous kernel inside ``model``, or ones."""
    for module in model.covar_module.modules():
        ls = getattr(module, "lengthscale", None)
        if (
            ls is not None
            and ls.shape[-1] == n_cont
            and getattr(module, "active_dims", None) is not None
        ):
            return ls.detach().reshape(-1).to(DTYPE)
    for module in model.covar_module.modules():
        ls = getattr(module, "lengthscale", None)
        if ls is not None and ls.shape[-1] == n_cont:
            return ls.detach().reshape(-1).to(DTYPE)
    return torch.ones(n_cont, dtype=DTYPE)


class MixedDistance:
    """Lengthscale-scaled Euclidean on continuous columns plus graph hops on discrete columns.

    ``hops`` gives, per discrete column, the ``(n, n)`` shortest-path matrix of its graph; ``None``
    (or a ``None`` entry) means a complete graph, i.e. Hamming mismatch.
    """

    def __init__(
        self,
        cont_dims: Sequence[int],
        cat_dims: Sequence[int],
        lengthscales: torch.Tensor,
        hops: Sequence[np.ndarray | None] | None = None,
    ):
        self.cont = torch.as_tensor(list(cont_dims), dtype=torch.long)
        self.cat = torch.as_tensor(list(cat_dims), dtype=torch.long)
        self.lengthscales = lengthscales.clamp_min(1e-6)
        hops = [None] * len(self.cat) if hops is None else list(hops)
        if len(hops) != len(self.cat):
            raise ValueError(f"{len(hops)} hop matrices for {len(self.cat)} discrete columns.")
        self.hops = [None if h is None else torch.as_tensor(h, dtype=DTYPE) for h in hops]
        self._graph = [i for i, h in enumerate(self.hops) if h is not None]
        self._hamming = torch.as_tensor(
            [i for i, h in enumerate(self.hops) if h is None], dtype=torch.long
        )

    def adjacent(self, column: int, value: int, n_values: int) -> list[int]:
        """The values one edge away from ``value`` in discrete column number ``column``."""
        h = self.hops[column]
        if h is None:
            return [v for v in range(n_values) if v != value]
        return torch.nonzero(h[value] == 1).reshape(-1).tolist()

    def unscaled(self, X: torch.Tensor, busy: torch.Tensor) -> torch.Tensor:
        """``(..., b)`` Euclidean distances over the continuous columns in the unit box, from rows
        ``X (..., d)`` to each busy row; ``inf`` where a discrete value differs."""
        diff = X.unsqueeze(-2) - busy  # (..., b, d)
        d = (diff[..., self.cont] ** 2).sum(-1).add(_TINY).sqrt()
        if len(self.cat):
            differs = (diff[..., self.cat].abs() > 0.5).any(-1)
            d = torch.where(differs, torch.full_like(d, float("inf")), d)
        return d

    def __call__(self, X: torch.Tensor, busy: torch.Tensor) -> torch.Tensor:
        """``(..., b)`` distances from rows ``X (..., d)`` to each busy row ``busy (b, d)``."""
        diff = X.unsqueeze(-2) - busy  # (..., b, d)
        sq = ((diff[..., self.cont] / self.lengthscales) ** 2).sum(-1)
        if len(self._hamming):
            sq = sq + (diff[..., self.cat[self._hamming]].abs() > 0.5).to(DTYPE).sum(-1)
        for i in self._graph:
            h, col = self.hops[i], int(self.cat[i])
            n = h.shape[0]
            a = X[..., col].round().long().clamp(0, n - 1).unsqueeze(-1)
            b = busy[:, col].round().long().clamp(0, n - 1)
            sq = sq + h[a, b] ** 2
        return (sq + _TINY).sqrt()


def graph_hops(adjacency: np.ndarray) -> np.ndarray:
    """All shortest-path distances, in edges, of a graph (unreachable pairs: ``n``)."""
    from scipy.sparse.csgraph import shortest_path

    A = (np.asarray(adjacency, dtype=float) > 0).astype(float)
    hops = shortest_path(A, method="D", unweighted=True)
    return np.where(np.isfinite(hops), hops, float(len(A)))


def _mean(model: Model, X: torch.Tensor) -> torch.Tensor:
    return model.posterior(X).mean.squeeze(-1)


def lipschitz_constants(
    model: Model,
    busy: torch.Tensor,
    distance: MixedDistance,
    rng: np.random.Generator,
    n_choices: Sequence[int],
    local: bool = True,
) -> torch.Tensor:
    """One Lipschitz estimate of the posterior mean per busy row (see the module docstring).

    ``n_choices`` are the numbers of values of the discrete columns (graph nodes).
    """
    cont, cat = distance.cont, distance.cat
    ls = distance.lengthscales
    out = []
    for x in busy:
        slopes = [torch.zeros((), dtype=DTYPE)]
        if len(cont):
            n = _N_LIPSCHITZ_POINTS
            u = torch.as_tensor(rng.random((n, len(cont))), dtype=DTYPE)
            pts = x.repeat(n, 1)
            if local:
                box = x[cont] + (2.0 * u - 1.0) * ls  # side 2ℓ, as in the thesis
                pts[:, cont] = box.clamp(0.0, 1.0)
                pts[0] = x
            else:
                pts[:, cont] = u
                for c, k in zip(cat.tolist(), n_choices, strict=True):
                    pts[:, c] = torch.as_tensor(rng.integers(0, k, n), dtype=DTYPE)
            pts.requires_grad_(True)
            mu = _mean(model, pts[:, None, :]).sum()
            (grad,) = torch.autograd.grad(mu, pts)
            slopes.append((grad[:, cont] * ls).norm(dim=-1).max())
        if len(cat):
            neighbours = []
            for i, (c, k) in enumerate(zip(cat.tolist(), n_choices, strict=True)):
                for v in distance.adjacent(i, int(x[c].round()), k):
                    nb = x.clone()
                    nb[c] = v
                    neighbours.append(nb)
            if neighbours:
                nbs = torch.stack(neighbours)
                with torch.no_grad():
                    delta = (_mean(model, nbs[:, None, :]) - _mean(model, x[None, None, :])).abs()
                    dist = distance(nbs, x[None]).squeeze(-1)
                slopes.append((delta / dist).max())
        out.append(torch.stack(slopes).max().detach())
    return torch.stack(out).clamp_min(1e-7) if out else torch.empty(0, dtype=DTYPE)


def ball_lipschitz_constants(
    model: Model,
    busy: torch.Tensor,
    distance: MixedDistance,
    rng: np.random.Generator,
    lipschitz: torch.Tensor,
    best: float,
) -> torch.Tensor:
    """Local Lipschitz constants taken over each busy point's own penalised ball.

    PLAyBOOK's radius ``r_j = (|μ_j − M| + γ σ_j) / L_j`` rests on ``|f(x) − f(x_j)| ≤ L_j d``
    for the points ``x`` it penalises, so the slope that matters is the largest one inside the
    ball ``d < r_j``, not in a fixed box of one lengthscale around ``x_j``: near an optimum the
    mean is flat close to ``x_j`` and steep a lengthscale away, and the fixed box shrinks the
    radius of a busy point beside the incumbent to a sliver (a batch of near-copies).

    ``lipschitz`` (the box estimate) gives a valid radius ``r₀``. Each probe ``r = 2^k r₀`` below
    one unit takes the largest posterior-mean slope in the box enclosing the ball of radius
    ``r`` (continuous columns at ``x_j``'s discrete values: another discrete value is a unit away,
    outside the ball), ``L(r)``; since ``L`` never decreases with ``r``, ``min(r, gap / L(r))``
    is a valid radius too. The largest valid radius is returned as the constant ``gap / r``.
    """
    cont = distance.cont
    if not len(cont) or not len(busy):
        return lipschitz
    ls = distance.lengthscales
    with torch.no_grad():
        post = model.posterior(busy[:, None, :])
        mu = post.mean.reshape(-1)
        sigma = post.variance.clamp_min(1e-12).sqrt().reshape(-1)
    gap = ((best - mu).abs() + HLP_GAMMA * sigma).clamp_min(_TINY)
    out = []
    for x, g, L in zip(busy, gap, lipschitz, strict=True):
        best_radius = float((g / L).clamp(1e-9, MAX_RADIUS))
        r = 2.0 * best_radius
        while r < MAX_RADIUS:
            slope = _largest_slope(model, x, cont, ls, r, rng)
            best_radius = max(best_radius, min(r, float(g) / max(slope, 1e-7)))
            r *= 2.0
        out.append(g / best_radius)
    return torch.stack(out).to(DTYPE)


def _largest_slope(
    model: Model,
    x: torch.Tensor,
    cont: torch.Tensor,
    lengthscales: torch.Tensor,
    radius: float,
    rng: np.random.Generator,
) -> float:
    """The largest posterior-mean gradient norm, per lengthscale unit, among random points of the
    box ``x ± radius · lengthscales`` on the continuous columns (``x`` itself included)."""
    n = _N_LIPSCHITZ_POINTS
    u = torch.as_tensor(rng.random((n, len(cont))), dtype=DTYPE)
    pts = x.repeat(n, 1)
    pts[:, cont] = (x[cont] + (2.0 * u - 1.0) * lengthscales * radius).clamp(0.0, 1.0)
    pts[0] = x
    pts.requires_grad_(True)
    (grad,) = torch.autograd.grad(_mean(model, pts[:, None, :]).sum(), pts)
    return float((grad[:, cont] * lengthscales).norm(dim=-1).max())


class PenalizedAcquisition(AcquisitionFunction):
    """``log α₊(x) = log⁺ α(x) + Σ_j log φ(x | x_j)``: the PLAyBOOK acquisition (maximised)."""

    def __init__(
        self,
        base: AcquisitionFunction,
        model: Model,
        busy: torch.Tensor,
        distance: MixedDistance,
        lipschitz: torch.Tensor,
        best: float,
        *,
        penalizer: str = "hlp",
        log_base: bool = False,
    ):
        super().__init__(model)
        if penalizer not in ("hlp", "lp"):
            raise ValueError(f"penalizer must be 'hlp' or 'lp', got {penalizer!r}.")
        self.base = base
        self.distance = distance
        self.penalizer = penalizer
        self.log_base = log_base
        self.busy = busy.to(DTYPE)
        with torch.no_grad():
            post = model.posterior(self.busy[:, None, :])
            mu = post.mean.reshape(-1)
            sigma = post.variance.clamp_min(1e-12).sqrt().reshape(-1)
        self.r_mean = (best - mu).abs() / lipschitz
        self.r_sigma = sigma / lipschitz

    def log_penalty(self, X: torch.Tensor) -> torch.Tensor:
        """``Σ_j log φ(x | x_j)`` for rows ``X (..., d)``."""
        if len(self.busy) == 0:
            return torch.zeros(X.shape[:-1], dtype=X.dtype)
        d = self.distance(X, self.busy)
        if self.penalizer == "hlp":
            radius = (self.r_mean + HLP_GAMMA * self.r_sigma).clamp(1e-9, MAX_RADIUS)
            # log((d/r)^p + 1) / p, with p < 0, computed as -log1p((r/d)^|p|) / |p|
            ratio = torch.exp(-HLP_POWER * (torch.log(radius) - torch.log(d)))
            log_phi = -torch.log1p(ratio) / -HLP_POWER
        else:
            z = (d - self.r_mean) / self.r_sigma.clamp_min(1e-9)
            log_phi = torch.special.log_ndtr(z)
        return log_phi.sum(-1) + self.log_separation(X)

    def log_separation(self, X: torch.Tensor) -> torch.Tensor:
        """A steep wall, ``−SEPARATION_SLOPE · (1 − d / MIN_SEPARATION)`` inside the distance
        ``MIN_SEPARATION`` of a busy point (continuous columns in the unit box, the same discrete
        values), zero outside: see the module docstring."""
        d = self.distance.unscaled(X, self.busy)
        inside = (1.0 - d / MIN_SEPARATION).clamp_min(0.0)
        return -SEPARATION_SLOPE * inside.sum(-1)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        alpha = self.base(X)
        log_alpha = (
            alpha if self.log_base else torch.log(torch.nn.functional.softplus(alpha) + 1e-30)
        )
        return log_alpha + self.log_penalty(X.squeeze(-2))


def penalize(
    base: AcquisitionFunction,
    model: Model,
    busy_rows: np.ndarray,
    cont_dims: Sequence[int],
    cat_dims: Sequence[int],
    n_choices: Sequence[int],
    rng: np.random.Generator,
    *,
    best: float,
    penalizer: str = "hlp",
    lipschitz: str = "local",
    log_base: bool = False,
    lengthscales: torch.Tensor | None = None,
    hops: Sequence[np.ndarray | None] | None = None,
) -> PenalizedAcquisition:
    """Wrap ``base`` with PLAyBOOK penalisers around ``busy_rows`` (the model's input rows).

    ``lengthscales`` of the continuous columns default to those found in the model's kernel;
    ``hops`` (per discrete column) to Hamming mismatch, see :class:`MixedDistance`.
    """
    if lipschitz not in ("local", "global"):
        raise ValueError(f"lipschitz must be 'local' or 'global', got {lipschitz!r}.")
    busy = torch.as_tensor(np.asarray(busy_rows, dtype=float), dtype=DTYPE).reshape(
        -1, len(cont_dims) + len(cat_dims)
    )
    if lengthscales is None:
        lengthscales = continuous_lengthscales(model, len(cont_dims))
    distance = MixedDistance(cont_dims, cat_dims, lengthscales, hops)
    if lipschitz == "local":
        L = lipschitz_constants(model, busy, distance, rng, n_choices, local=True)
        L = ball_lipschitz_constants(model, busy, distance, rng, L, best)
    else:
        probe = busy[:1] if len(busy) else busy
        L = lipschitz_constants(model, probe, distance, rng, n_choices, local=False)
        L = L.max().expand(len(busy)) if len(L) else L
    return PenalizedAcquisition(
        base, model, busy, distance, L, best, penalizer=penalizer, log_base=log_base
    )


def best_model_value(model: Model) -> float:
    """``M``: the largest posterior mean at the observed inputs (the model's incumbent value).

    Not the largest observed target: with noise (and warped targets, whose extremes
    sit far out) the model never reaches it, and ``|μ(x_j) − M|`` would stay large even at the
    incumbent, where PLAyBOOK's penalised region should shrink to nothing (its property (i)).
    """
    X = model.train_inputs[0]
    with torch.no_grad():
        return float(model.posterior(X[:, None, :]).mean.max())


def acquisition_with_busy_points(
    make_base,
    model: Model,
    busy_rows: np.ndarray,
    cont_dims: Sequence[int],
    cat_dims: Sequence[int],
    n_choices: Sequence[int],
    rng: np.random.Generator,
    *,
    policy: BusyPolicy = BusyPolicy(),
    log_base: bool = False,
    lengthscales: torch.Tensor | None = None,
    hops: Sequence[np.ndarray | None] | None = None,
) -> AcquisitionFunction:
    """The acquisition to maximise while ``busy_rows`` are being evaluated.

    ``make_base(model)`` builds the method's acquisition. ``policy.pending`` chooses how busy
    points count: ``"playbook"`` penalises around them (this module), ``"kriging_believer"``
    conditions the GP on its own mean at them (the comparison baseline), ``"ignore"`` does
    neither. ``log_base`` says ``make_base`` returns a log-acquisition (LogEI); ``lengthscales``
    and ``hops`` define the distance (:func:`penalize`).
    """
    busy_rows = np.asarray(busy_rows, dtype=float).reshape(-1, len(cont_dims) + len(cat_dims))
    if len(busy_rows) == 0 or policy.pending == "ignore":
        return make_base(model)
    if policy.pending == "kriging_believer":
        X = torch.as_tensor(busy_rows, dtype=DTYPE)
        with torch.no_grad():
            mean = model.posterior(X).mean
        return make_base(model.condition_on_observations(X, mean))
    best = best_model_value(model)
    return penalize(
        make_base(model),
        model,
        busy_rows,
        cont_dims,
        cat_dims,
        n_choices,
        rng,
        best=best,
        penalizer=policy.penalizer,
        lipschitz=policy.lipschitz,
        log_base=log_base,
        lengthscales=lengthscales,
        hops=hops,
    )
