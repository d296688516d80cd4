"""MAP fits of a GP's hyper-parameters: the negative log posterior computed directly from a
Cholesky factor and minimised by scipy's L-BFGS-B over the raw parameters.

The objective is the exact log marginal likelihood (Rasmussen and Williams 2006, Eq 2.30) plus the
log priors the model registers, negated and per observation: gpytorch's
``ExactMarginalLogLikelihood`` as BoTorch minimises it, less the constant ``½ log 2π``. It is
computed here without gpytorch's MLL and BoTorch's closure machinery, whose bookkeeping costs more
than the linear algebra of a few hundred observations (one evaluation with its gradient at 100
observations of the 9-parameter mixed space, one thread: 2.6 ms through BoTorch, 1.3 ms here).
For the kernels and priors the methods build, the same value and gradient come in closed form
from numpy (:mod:`common.models.analytic_map`, 0.3 ms); autograd serves any other model.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import numpy as np
import torch

from common.models.analytic_map import AnalyticMAP
from common.models.kernels.dense import kernel_matrix

# Objective evaluations per L-BFGS-B run, per allowed iteration: a run takes about one evaluation
# per iteration (the line search rarely backtracks), so this bounds only pathological runs.
MAXFUN_PER_ITER = 3
FAILED = 1e10  # the loss where the covariance is not positive definite: the line search backs off

Bounds = Sequence[tuple[float | None, float | None]]


class MAPObjective:
    """The negative log posterior of ``model``'s raw hyper-parameters per observation.

    ``bounds`` holds one ``(lower, upper)`` pair per scalar parameter, in ``named_parameters``
    order; by default each constrained parameter's bounds in raw space, as BoTorch derives them
    (a noise floor without a transform becomes a lower bound; a softplus or sigmoid keeps its raw
    parameter unbounded). Parameters named in ``log_params`` are log-space values (``value =
    exp(raw) + floor``): their log-Jacobian turns each prior's density into one of ``raw``.
    """

    def __init__(
        self, model, bounds: Bounds | None = None, log_params: Collection[str] = ()
    ) -> None:
        self.model = model
        self.X = model.train_inputs[0]
        self.y = model.train_targets
        self.eye = torch.eye(len(self.y), dtype=self.y.dtype)
        named = list(model.named_parameters())
        self.params = [p for _, p in named]
        self.bounds = list(bounds) if bounds is not None else _constraint_bounds(model, named)
        self.priors = list(model.named_priors())
        self.log_params = [p for name, p in named if name.rsplit(".", 1)[-1] in log_params]
        self.analytic = AnalyticMAP.for_model(model, log_params)

    def _loss(self) -> torch.Tensor:
        model = self.model
        K = kernel_matrix(model.covar_module, self.X, self.X) + model.likelihood.noise * self.eye
        loss = GaussianNLL.apply(K, self.y - model.mean_module(self.X))
        for _, module, prior, closure, _ in self.priors:
            loss = loss - prior.log_prob(closure(module)).sum()
        for raw in self.log_params:  # value = exp(raw) + floor, so log |d value / d raw| = raw
            loss = loss - raw.sum()
        return loss / len(self.y)

    def value(self) -> float:
        """The loss at the model's current parameters (``inf`` where it cannot be computed)."""
        if self.analytic is not None:
            value = self._analytic(self._current())[0]
            return value if value < FAILED else math.inf
        try:
            with torch.no_grad():
                value = float(self._loss())
        except Exception:  # e.g. a non-PD matrix at a bad initialisation
            return math.inf
        return value if math.isfinite(value) else math.inf

    def minimise(self, maxiter: int) -> float:
        """At most ``maxiter`` L-BFGS-B iterations from the model's parameters, which are left at
        the result; returns the loss there."""
        from scipy.optimize import minimize

        lower = np.array([-np.inf if lo is None else lo for lo, _ in self.bounds])
        upper = np.array([np.inf if hi is None else hi for _, hi in self.bounds])
        floors = FloorLog(lower, upper)

        seen: dict[bytes, float] = {}  # the loss at each point evaluated

        def fun(t: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = evaluate(t)
            seen[t.tobytes()] = value
            return value, grad

        def evaluate(t: np.ndarray) -> tuple[float, np.ndarray]:
            x = floors.value(t)
            if self.analytic is not None:
                value, grad = self._analytic(x)
                return (value, floors.gradient(grad, x)) if value < FAILED else (value, grad)
            self._set(x)
            for p in self.params:
                p.grad = None
            try:
                loss = self._loss()
                loss.backward()
            except Exception:  # not PD here: a large value sends the line search back
                return FAILED, np.zeros_like(t)
            value = loss.item()
            grad = np.concatenate([_grad(p) for p in self.params])
            if not math.isfinite(value) or not np.all(np.isfinite(grad)):
                return FAILED, np.zeros_like(t)
            return value, floors.gradient(grad, x)

        t0 = floors.variable(np.clip(self._current(), lower, upper))
        options = {"maxiter": maxiter, "maxfun": MAXFUN_PER_ITER * maxiter}
        result = minimize(
            fun, t0, jac=True, method="L-BFGS-B", bounds=floors.bounds(self.bounds), options=options
        )
        self._set(floors.value(result.x))
        loss = seen.get(result.x.tobytes(), FAILED)  # value() at result.x, already computed
        return loss if loss < FAILED else self.value()

    def _analytic(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """The closed-form loss and gradient at ``x`` (``FAILED`` and zeros where the covariance
        is not positive definite or a value is not finite)."""
        try:
            with np.errstate(all="ignore"):
                value, grad = self.analytic(x)
        except (np.linalg.LinAlgError, ValueError):
            return FAILED, np.zeros_like(x)
        if not math.isfinite(value) or not np.all(np.isfinite(grad)):
            return FAILED, np.zeros_like(x)
        return value, grad

    def _current(self) -> np.ndarray:
        return np.concatenate([p.detach().reshape(-1).numpy() for p in self.params])

    def _set(self, x: np.ndarray) -> None:
        with torch.no_grad():
            i = 0
            for p in self.params:
                p.copy_(torch.as_tensor(x[i : i + p.numel()], dtype=p.dtype).reshape(p.shape))
                i += p.numel()


class FloorLog:
    """The optimiser's variables: ``t = log(x − floor)`` for a parameter bounded only below, ``x``
    itself for the others.

    A parameter with a floor and no transform (BoTorch's likelihood keeps the noise variance
    itself as its raw parameter, floored at 1e-4) is searched on its own scale, where a noise of
    1e-3 and one of 1e-2 are a hundredth apart while the likelihood sees a factor of ten; L-BFGS-B
    then creeps towards the floor for hundreds of iterations. On the log of its distance to the
    floor the same minimum is found in fewer iterations (a reparametrisation: the objective and
    so its minimiser are unchanged).
    """

    def __init__(self, lower: np.ndarray, upper: np.ndarray) -> None:
        self.logged = np.isfinite(lower) & ~np.isfinite(upper)
        self.floor = np.where(self.logged, lower, 0.0)

    def value(self, t: np.ndarray) -> np.ndarray:
        """``x`` at ``t``. A line search may probe a ``t`` whose exponential overflows: the value
        is then ``inf``, which the objective answers as a failed point, and not a warning the
        user would see."""
        with np.errstate(over="ignore"):
            grown = np.exp(np.where(self.logged, t, 0.0))
        return np.where(self.logged, self.floor + grown, t)

    def variable(self, x: np.ndarray) -> np.ndarray:
        """``t`` at ``x``; a parameter on its floor starts a thousandth of the floor above it
        (on the floor itself ``t = −∞``, where the gradient vanishes)."""
        gap = np.maximum(x - self.floor, 1e-3 * np.abs(self.floor) + np.finfo(float).tiny)
        return np.where(self.logged, np.log(np.where(self.logged, gap, 1.0)), x)

    def gradient(self, grad_x: np.ndarray, x: np.ndarray) -> np.ndarray:
        return grad_x * np.where(self.logged, x - self.floor, 1.0)

    def bounds(self, bounds: Bounds) -> list:
        pairs = zip(self.logged, bounds, strict=True)
        return [(None, None) if logged else bound for logged, bound in pairs]


class GaussianNLL(torch.autograd.Function):
    """``½ rᵀ K⁻¹ r + ½ log |K|``, the negative log density of residuals ``r`` under ``N(0, K)``
    less ``(n/2) log 2π``, with its exact gradient ``∂/∂K = ½ (K⁻¹ − α αᵀ)``, ``∂/∂r = α``, where
    ``α = K⁻¹ r`` (Rasmussen and Williams 2006, Eq 5.9).

    One inverse from the Cholesky factor replaces autograd's backward pass through the
    factorisation and the solve, which at a hundred observations costs more than the kernel's.
    A matrix that is not positive definite raises, as ``torch.linalg.cholesky`` does.
    """

    @staticmethod
    def forward(ctx, K: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(r.unsqueeze(-1), L).squeeze(-1)
        ctx.save_for_backward(L, alpha)
        return 0.5 * (r * alpha).sum() + L.diagonal().log().sum()

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        L, alpha = ctx.saved_tensors
        grad_K = 0.5 * (torch.cholesky_inverse(L) - torch.outer(alpha, alpha)) * grad
        return grad_K, alpha * grad


def _constraint_bounds(model, named: list) -> list[tuple[float | None, float | None]]:
    """Per scalar parameter of ``named``, its constraint's bounds in raw space (``None``:
    unbounded)."""
    from botorch.optim.utils import get_parameters_and_bounds

    _, bounds = get_parameters_and_bounds(model)
    out: list[tuple[float | None, float | None]] = []
    for name, p in named:
        lower, upper = (_finite_or_none(b) for b in bounds.get(name, (None, None)))
        out += [(lower, upper)] * p.numel()
    return out


def _finite_or_none(bound) -> float | None:
    if bound is None:
        return None
    value = float(bound)
    return value if math.isfinite(value) else None


def _grad(p: torch.Tensor) -> np.ndarray:
    return np.zeros(p.numel()) if p.grad is None else p.grad.detach().reshape(-1).numpy()
