"""PLAyBOOK: local penalisation of the acquisition around busy points (asynchronous batch BO).

Alvi, Ru, Calliess, Roberts, Osborne. "Asynchronous batch Bayesian optimisation with improved local
penalisation", ICML 2019 (seed 002 ch. 4, seed 000 ch. 4).

The acquisition, made non-negative, is multiplied by one penaliser per busy point ``x_j`` (a running
trial, or a point already picked for the same batch). Everything is computed in log space:

    log α₊(x) = log⁺ α(x) + Σ_j log φ(x | x_j)

with ``log⁺ α = log softplus(α)`` for an acquisition such as UCB and ``α`` itself for a
log-acquisition (LogEI). Penalisers, with ``r_j = (|μ(x_j) − M| + γ σ(x_j)) / L_j`` and ``M`` the
best observed model value:

- ``"hlp"`` (default), the hard local penaliser ``φ = ((d / r_j)^p + 1)^(1/p)``, p = −5, γ = 1: a
  smoothed cone, 0 at ``x_j`` and 1 beyond the radius.
- ``"lp"``, the local penaliser of González et al. ``φ = Φ((d − |μ_j − M| / L_j) / (σ_j / L_j))``.

**Distance on mixed inputs** (our choice, documented here):
``d(x, x')² = Σ_cont ((x_i − x'_i) / ℓ_i)² + Σ_cat w_c · 1[h_c ≠ h'_c]``, with ``ℓ`` the GP's
continuous ARD lengthscales and ``w_c = 1``: one category change is as far as one lengthscale.
Continuous differences are measured in lengthscale units, so the Lipschitz constant is taken with
respect to the same scaled coordinates.

**Lipschitz constant** ``L_j``: "local" (default) is the largest posterior-mean gradient norm in a
box one lengthscale wide around ``x_j`` (continuous dims, at ``x_j``'s categories), together with
the largest finite-difference slope to ``x_j``'s one-category-changed neighbours; "global" takes
the largest of these over the whole space (random points).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from botorch.acquisition import AcquisitionFunction
from botorch.models.model import Model

from common.gp import DTYPE
from common.strategy import PENDING_METHODS, check_pending_options  # noqa: F401

HLP_POWER = -5.0
HLP_GAMMA = 1.0
_N_LIPSCHITZ_POINTS = 64
_TINY = 1e-12


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
    """Lengthscale-scaled Euclidean on continuous columns plus weighted Hamming on categoricals."""

    def __init__(
        self,
        cont_dims: Sequence[int],
        cat_dims: Sequence[int],
        lengthscales: torch.Tensor,
        cat_weights: torch.Tensor | None = None,
    ):
        self.cont = torch.as_tensor(list(cont_dims), dtype=torch.long)
        self.cat = torch.as_tensor(list(cat_dims), dtype=torch.long)
        self.lengthscales = lengthscales.clamp_min(1e-6)
        self.cat_weights = (
            torch.ones(len(self.cat), dtype=DTYPE) if cat_weights is None else cat_weights
        )

    def __call__(self, X: torch.Tensor, busy: torch.Tensor) -> torch.Tensor:
        """``(..., b)`` distances from rows ``X (..., d)`` to each busy row ``busy (b, d)``."""
        diff = X.unsqueeze(-2) - busy  # (..., b, d)
        sq = ((diff[..., self.cont] / self.lengthscales) ** 2).sum(-1)
        if len(self.cat):
            mismatch = (diff[..., self.cat].abs() > 0.5).to(DTYPE)
            sq = sq + (mismatch * self.cat_weights).sum(-1)
        return (sq + _TINY).sqrt()


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
    """One Lipschitz estimate of the posterior mean per busy row (see the module docstring)."""
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
                box = x[cont] + (u - 0.5) * ls
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
            for c, k in zip(cat.tolist(), n_choices, strict=True):
                for v in range(k):
                    if v != int(x[c]):
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
            radius = (self.r_mean + HLP_GAMMA * self.r_sigma).clamp_min(1e-9)
            # log((d/r)^p + 1) / p, with p < 0, computed as -log1p((r/d)^|p|) / |p|
            ratio = torch.exp(-HLP_POWER * (torch.log(radius) - torch.log(d)))
            log_phi = -torch.log1p(ratio) / -HLP_POWER
        else:
            z = (d - self.r_mean) / self.r_sigma.clamp_min(1e-9)
            log_phi = torch.special.log_ndtr(z)
        return log_phi.sum(-1)

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
) -> PenalizedAcquisition:
    """Wrap ``base`` with PLAyBOOK penalisers around ``busy_rows`` (encoded configurations)."""
    if lipschitz not in ("local", "global"):
        raise ValueError(f"lipschitz must be 'local' or 'global', got {lipschitz!r}.")
    busy = torch.as_tensor(np.asarray(busy_rows, dtype=float), dtype=DTYPE).reshape(
        -1, len(cont_dims) + len(cat_dims)
    )
    distance = MixedDistance(cont_dims, cat_dims, continuous_lengthscales(model, len(cont_dims)))
    if lipschitz == "local":
        L = lipschitz_constants(model, busy, distance, rng, n_choices, local=True)
    else:
        probe = busy[:1] if len(busy) else busy
        L = lipschitz_constants(model, probe, distance, rng, n_choices, local=False)
        L = L.max().expand(len(busy)) if len(L) else L
    return PenalizedAcquisition(
        base, model, busy, distance, L, best, penalizer=penalizer, log_base=log_base
    )


def acquisition_with_busy_points(
    make_base,
    model: Model,
    busy_rows: np.ndarray,
    cont_dims: Sequence[int],
    cat_dims: Sequence[int],
    n_choices: Sequence[int],
    rng: np.random.Generator,
    *,
    pending: str = "playbook",
    penalizer: str = "hlp",
    lipschitz: str = "local",
    log_base: bool = False,
) -> AcquisitionFunction:
    """The acquisition to maximise while ``busy_rows`` are being evaluated.

    ``make_base(model)`` builds the method's acquisition. ``pending`` chooses how busy points count:
    ``"playbook"`` penalises around them (this module), ``"kriging_believer"`` conditions the GP on
    its own mean at them (the comparison baseline), ``"ignore"`` does neither.
    """
    busy_rows = np.asarray(busy_rows, dtype=float).reshape(-1, len(cont_dims) + len(cat_dims))
    if len(busy_rows) == 0 or pending == "ignore":
        return make_base(model)
    if pending == "kriging_believer":
        X = torch.as_tensor(busy_rows, dtype=DTYPE)
        with torch.no_grad():
            mean = model.posterior(X).mean
        return make_base(model.condition_on_observations(X, mean))
    best = float(model.train_targets.max())
    return penalize(
        make_base(model),
        model,
        busy_rows,
        cont_dims,
        cat_dims,
        n_choices,
        rng,
        best=best,
        penalizer=penalizer,
        lipschitz=lipschitz,
        log_base=log_base,
    )
