"""The MAP objective of mixbo's own GPs in numpy, with hand-derived gradients.

:class:`common.models.map_fit.MAPObjective` evaluates the negative log posterior of a model's raw
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
from ``ScaleKernel``, :class:`common.models.kernels.mixture.MixtureKernel`, Matérn-5/2 (ARD or not),
:class:`common.models.kernels.overlap.OverlapKernel` and
:class:`common.models.kernels.overlap.TransformedOverlapKernel`; priors Gamma, log-normal and normal
on the parameters gpytorch and these kernels register them on; constraints with a softplus or
sigmoid transform, or none.

>>> objective = AnalyticMAP.for_model(model)  # None: use MAPObjective's autograd path
>>> loss, grad = objective(raw)  # raw parameters in model.named_parameters() order
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection

import numpy as np
import torch
from scipy.linalg import lapack

from common.models.kernels.fast_forms import MAPParameter, MAPTerm, Unsupported, forms_of
from common.models.kernels.frequency_modulated import (
    InverseGammaPrior,
)

SQRT5 = math.sqrt(5.0)
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


# ---------------------------------------------------------------------- priors
LogPrior = Callable[[np.ndarray], tuple[float, np.ndarray]]


def _gamma(prior) -> LogPrior:
    a, b = float(prior.concentration), float(prior.rate)
    const = a * math.log(b) - math.lgamma(a)

    def gamma(x):
        return float(np.sum(const + (a - 1) * np.log(x) - b * x)), (a - 1) / x - b

    return gamma


def _log_normal(prior) -> LogPrior:
    mu, sigma = float(prior.loc), float(prior.scale)

    def log_normal(x):
        z = (np.log(x) - mu) / sigma
        value = np.sum(-np.log(x) - math.log(sigma) - HALF_LOG_2PI - 0.5 * z * z)
        return float(value), (-1.0 - z / sigma) / x

    return log_normal


def _normal(prior) -> LogPrior:
    mu, sigma = float(prior.loc), float(prior.scale)

    def normal(x):
        z = (x - mu) / sigma
        return float(np.sum(-math.log(sigma) - HALF_LOG_2PI - 0.5 * z * z)), -z / sigma

    return normal


def _horseshoe(prior) -> LogPrior:
    """gpytorch's horseshoe density: the mean of its two bounds."""
    scale, K = float(prior.scale), prior.K

    def horseshoe(x):
        A = (scale / x) ** 2
        lb, ub = K / 2 * np.log1p(4 * A), K * np.log1p(2 * A)
        dA = -2.0 * A / x
        d_sum = K / 2 * 4 * dA / (1 + 4 * A) + K * 2 * dA / (1 + 2 * A)
        return float(np.sum(np.log((lb + ub) / 2))), d_sum / (lb + ub)

    return horseshoe


def _inverse_gamma(prior) -> LogPrior:
    a, b = float(prior.concentration), float(prior.rate)
    const = a * math.log(b) - math.lgamma(a)

    def inverse_gamma(x):
        return float(np.sum(const - (a + 1) * np.log(x) - b / x)), -(a + 1) / x + b / x**2

    return inverse_gamma


def _log_prior_forms() -> dict[type, Callable[[object], LogPrior]]:
    """Each prior class with a closed form, by exact class (a subclass may change the density)."""
    from gpytorch.priors import GammaPrior, HorseshoePrior, LogNormalPrior, NormalPrior

    return {
        GammaPrior: _gamma,
        LogNormalPrior: _log_normal,
        NormalPrior: _normal,
        HorseshoePrior: _horseshoe,
        InverseGammaPrior: _inverse_gamma,
    }


def _log_prior(prior) -> LogPrior | None:
    """``x ↦ (Σ log p(x), ∂/∂x)`` for a gpytorch Gamma, log-normal, normal or horseshoe prior,
    or BO-FM's inverse gamma (none with a transform of its own); None for any other."""
    if getattr(prior, "_transform", None) is not None:
        return None
    form = _log_prior_forms().get(type(prior))
    return None if form is None else form(prior)


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
    gradient, both as :class:`common.models.map_fit.MAPObjective` computes them (the same value and
    gradient to rounding), from numpy."""

    def __init__(self, model, log_params: Collection[str] = ()) -> None:
        from gpytorch.means import ConstantMean

        if getattr(model, "input_transform", None) is not None:
            raise Unsupported
        if getattr(model, "outcome_transform", None) is not None:
            raise Unsupported
        if not isinstance(model.mean_module, ConstantMean):
            raise Unsupported
        self.X = model.train_inputs[0].detach().numpy()
        self.y = model.train_targets.detach().numpy()
        if self.X.ndim != 2 or self.y.ndim != 1:
            raise Unsupported
        named = list(model.named_parameters())
        self.size = sum(p.numel() for _, p in named)
        self.params: dict[str, MAPParameter] = {}
        start = 0
        for name, p in named:
            module_path, _, attr = name.rpartition(".")
            module = model.get_submodule(module_path)
            constraint = getattr(module, f"{attr}_constraint", None)
            self.params[name] = MAPParameter(p, start, constraint)
            start += p.numel()
        flat = np.concatenate([p.detach().reshape(-1).numpy() for _, p in named])
        for param in self.params.values():
            param.load(flat)
        self._kernel_params: list[MAPParameter] = []
        self.kernel = self.term(model.covar_module, "covar_module")
        self.noise = self.params["likelihood.noise_covar.raw_noise"]
        self.mean = self.params["mean_module.raw_constant"]
        self.priors = self._priors(model)
        self.log_params = [
            p for name, p in self.params.items() if name.rsplit(".")[-1] in log_params
        ]
        used = {id(p) for p in [*self._kernel_params, self.noise, self.mean]}
        if set(map(id, self.params.values())) != used:  # a parameter this module does not know
            raise Unsupported

    @classmethod
    def for_model(cls, model, log_params: Collection[str] = ()) -> AnalyticMAP | None:
        """The analytic objective of ``model`` (parameters named in ``log_params`` with their
        log-Jacobian, as :class:`common.models.map_fit.MAPObjective`), or ``None`` where it has a
        part not covered."""
        try:
            return cls(model, log_params)
        except (Unsupported, KeyError, AttributeError):
            return None

    # -------------------------------------------------------------- structure
    def term(self, kernel, path: str) -> MAPTerm:
        """The MAP term of ``kernel`` (at ``path`` in the model), from its registered fast forms
        (:mod:`common.models.kernels.fast_forms`)."""
        X = self.X
        if kernel.active_dims is not None:
            X = X[:, kernel.active_dims.numpy()]
        forms = forms_of(kernel)
        if forms is None or forms.map_term is None:
            raise Unsupported
        return forms.map_term(kernel, X, path, self)

    def own(self, path: str, attr: str) -> MAPParameter:
        param = self.params[f"{path}.{attr}"]
        self._kernel_params.append(param)
        return param

    def _priors(self, model) -> list[tuple[MAPParameter, str, Callable]]:
        priors = []
        for name, module, prior, closure, _ in model.named_priors():
            module_path, _, prior_name = name.rpartition(".")
            target = _PRIOR_TARGETS.get((type(module).__name__, prior_name))
            log_prior = _log_prior(prior)
            if target is None or log_prior is None:
                raise Unsupported
            attr, seen_as = target
            param = self.params[f"{module_path}.{attr}" if module_path else attr]
            expected = param.value if seen_as == "value" else (lambda p=param: p.raw)
            with torch.no_grad():  # the closure must be what this table says it is
                seen = closure(module).detach().reshape(-1).numpy()
            if seen.shape != expected().shape or not np.allclose(seen, expected(), rtol=1e-9):
                raise Unsupported
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
