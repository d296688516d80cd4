"""Fitting a GP on mixed inputs with BoTorch, robustly and warm-started.

Targets are warped (:data:`WARPINGS`: Gaussian-copula ranks by default), standardised and
*negated*: the fitted model is of ``−y`` so that every acquisition is maximised, in BoTorch's
convention, while the history stores values to minimise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import torch
from botorch.models import SingleTaskGP
from botorch.models.utils.gpytorch_modules import get_gaussian_likelihood_with_lognormal_prior
from botorch.posteriors import GPyTorchPosterior
from gpytorch.kernels import Kernel

from common.kernels import kernel_matrix
from common.log import warn
from common.map_fit import MAPObjective

DTYPE = torch.float64
FIT_MAXITER = 200  # iteration cap: the result does not depend on the machine's load
# A refit continued from the previous fit's optimum (CoCaBO's and CASMOPOLITAN's objective models)
# stops after this many L-BFGS-B iterations, and the next refit continues from there. With one or
# two more observations the optimum moves by O(1/n). Most of the 200 iterations an uncapped refit
# once ran were spent creeping along the noise variance's own scale towards its floor; searched on
# its log (common.map_fit.FloorLog) a refit converges in 30-50 iterations, and in studies that grow
# one observation at a time mostly within this cap: of MixboSampler's 50 runs of 100 trials on
# five problems (mixbo-compare, 10 seeds), 44 ended at the same best value with and without it,
# the others within noise. It bounds the rest (a new worker's refits on a history it did not grow,
# a jump in the warped targets): README, "At scale".
WARM_FIT_MAXITER = 25


def standardise(values: np.ndarray) -> np.ndarray:
    """Gaussian-copula standardisation: ranks mapped to normal quantiles, then zero mean, unit std.

    As in CASMOPOLITAN's reference; a few huge values (common on benchmark edges and with diverging
    training runs) then no longer flatten the differences near the optimum. Ties share a rank.
    """
    from scipy.special import ndtri  # the normal quantile; scipy.stats costs a new worker 0.2 s

    values = np.asarray(values, dtype=float)
    z = ndtri((average_ranks(values) - 0.5) / len(values))
    std = float(np.std(z))
    return (z - np.mean(z)) / (std if std > 1e-12 else 1.0)


def power_standardise(values: np.ndarray) -> np.ndarray:
    """A Box-Cox power transform (Box and Cox 1964, as HEBO warps its targets), then z-scores.

    The transform is of ``1 + (y − min y) / std(y)``, so it does not depend on the objective's
    offset or units, and its exponent maximises the likelihood of normal transformed values.
    Unlike the copula's ranks it keeps how much worse a value is: a neighbour of the incumbent
    that is far worse looks far worse. Non-finite or constant values fall back to the copula.
    """
    warped, _ = _power_with_slope(values)
    return standardise(values) if warped is None else warped


def _power_with_slope(values: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """:func:`power_standardise`'s z-scores and their derivative at each value (``None`` twice
    where it falls back to the copula)."""
    values = np.asarray(values, dtype=float)
    std = float(np.std(values)) if np.all(np.isfinite(values)) else 0.0
    if len(values) >= 3 and std > 1e-12:
        x = 1.0 + (values - values.min()) / std
        exponent = _box_cox_exponent(values, std)
        warped = _box_cox(x, exponent)
        spread = float(np.std(warped))
        if np.all(np.isfinite(warped)) and spread > 1e-12:
            return (warped - warped.mean()) / spread, x ** (exponent - 1.0) / (std * spread)
    return None, None


def _box_cox(x: np.ndarray, exponent: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.log(x) if abs(exponent) < 1e-8 else (x**exponent - 1.0) / exponent


def _box_cox_exponent(values: np.ndarray, std: float) -> float:
    """The maximum-likelihood Box-Cox exponent in [−5, 5] for ``1 + (values − min) / std``.

    ``scipy.stats.boxcox_normmax`` maximises the same likelihood, but importing ``scipy.stats``
    costs a new worker's first suggestion 0.2 s of CPU; this is a bounded scalar search.
    """
    from scipy.optimize import minimize_scalar

    x = 1.0 + (values - values.min()) / std
    log_jacobian = float(np.log(x).sum())

    def negative_log_likelihood(exponent: float) -> float:
        var = float(np.var(_box_cox(x, exponent)))
        if not np.isfinite(var) or var <= 0:
            return np.inf
        return 0.5 * len(x) * np.log(var) - (exponent - 1.0) * log_jacobian

    return float(minimize_scalar(negative_log_likelihood, bounds=(-5.0, 5.0), method="bounded").x)


def blend_standardise(values: np.ndarray) -> np.ndarray:
    """The mean of the copula's and the power transform's z-scores, z-scored again.

    Each alone loses something the search needs: the copula's ranks keep near-equal values near
    the optimum apart (a plateau's or a table's near-ties) but say nothing of how much worse a
    value is, and the power transform keeps magnitudes but can merge near-ties. Their mean is
    again an increasing function of the values (the order is kept) and keeps half of each.
    """
    blend = standardise(values) + power_standardise(values)
    spread = float(np.std(blend))
    return (blend - np.mean(blend)) / (spread if spread > 1e-12 else 1.0)


WARPINGS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "copula": standardise,
    "blend": blend_standardise,
    "power": power_standardise,
}
"""The objective's target warpings by name (a constraint's targets are never warped)."""


def warping_log_jacobian(warping: str, values: np.ndarray) -> float:
    """The mean log-derivative of :data:`WARPINGS` ``[warping]`` at ``values``.

    A GP of warped targets is a model of the values themselves once its likelihood is multiplied
    by the warping's derivative at each value (the warped GP of Snelson, Rasmussen and Ghahramani
    2004), so fits to differently warped targets are compared by their objective per observation
    minus this. The copula's rank map has no derivative: its slope is an m-spacing estimate
    (:func:`_copula_slope`), whose ties carry their joint mass, so no value has an infinite
    density.
    """
    values = np.asarray(values, dtype=float)
    if warping == "copula":
        slope = _copula_slope(values)
    elif warping == "power":
        slope = _power_slope(values)
    else:  # blend_standardise: (copula + power) z-scored again
        copula, (power, power_slope) = standardise(values), _power_with_slope(values)
        if power is None:
            power, power_slope = copula, _copula_slope(values)
        spread = float(np.std(copula + power))
        slope = (_copula_slope(values) + power_slope) / (spread if spread > 1e-12 else 1.0)
    with np.errstate(divide="ignore"):
        return float(np.mean(np.log(slope)))


def _copula_slope(values: np.ndarray) -> np.ndarray:
    """:func:`standardise`'s derivative at each value: the rank map's slope between the distinct
    values ``m`` places to either side, ``m`` about half the root of their number (Vasicek's
    m-spacing density estimate: one spacing's slope is noisy, and its log biased upwards); 1
    where all values are equal."""
    from scipy.special import ndtri

    n = len(values)
    distinct, index = np.unique(values, return_inverse=True)
    if len(distinct) < 2:
        return np.ones(n)
    levels = (average_ranks(values) - 0.5) / n
    level = np.zeros(len(distinct))
    np.add.at(level, index, levels)
    level /= np.bincount(index)  # each distinct value's quantile level
    m = max(1, round(math.sqrt(len(distinct)) / 2))
    k = np.arange(len(distinct))
    left, right = np.maximum(k - m, 0), np.minimum(k + m, len(distinct) - 1)
    slope = (level[right] - level[left]) / (distinct[right] - distinct[left])
    z = ndtri(levels)
    density = np.exp(-0.5 * z**2) / math.sqrt(2.0 * math.pi)
    std = float(np.std(z))
    return slope[index] / (density * (std if std > 1e-12 else 1.0))


def _power_slope(values: np.ndarray) -> np.ndarray:
    """:func:`power_standardise`'s derivative at each value (the copula's where it falls back)."""
    _, slope = _power_with_slope(values)
    return _copula_slope(values) if slope is None else slope


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values``, tied values sharing their average rank (``rankdata``'s
    default, without importing ``scipy.stats``)."""
    values = np.asarray(values, dtype=float).reshape(-1)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts_group = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts_group) - 1
    counts = np.bincount(group)
    first = np.cumsum(counts) - counts  # 0-based position of each group's first member
    ranks = np.empty(len(values))
    ranks[order] = (first + (counts + 1) / 2.0)[group]
    return ranks


def _moments(values: np.ndarray) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    std = float(np.std(values))
    return float(np.mean(values)), std if std > 1e-12 else 1.0


def constraint_standardise(values: np.ndarray) -> np.ndarray:
    """A constraint's targets: zero mean and unit standard deviation, as Optuna's GPSampler
    standardises them. Unlike the objective's ranks (or any other warping), this keeps 0 an
    exact threshold on the model's scale (:func:`constraint_threshold`) and a linear constraint
    linear, so a stationary GP extrapolates it where the trials have not been."""
    mean, std = _moments(values)
    return (np.asarray(values, dtype=float) - mean) / std


def constraint_threshold(values: np.ndarray) -> float:
    """Where 0 lands on the negated :func:`constraint_standardise` scale of ``values``."""
    mean, std = _moments(values)
    return mean / std


def constraint_noise_prior():
    """A constraint model's noise: Optuna GPSampler's Gamma(1.1, 30) prior on the variance of
    standardised targets (with a 1e-6 floor where it is used). Most constraints (a model's size, a
    cost, a geometric bound) are deterministic, and feasibility is decided at a value's zero
    crossing, often by trials a hair apart; the methods' objective priors keep the variance above
    about 1e-3, which hid violations of a thousandth of a constraint's range and let the same
    infeasible neighbourhood be suggested again and again. This prior lets the data decide."""
    from gpytorch.priors import GammaPrior

    return GammaPrior(1.1, 30.0)


def constraint_likelihood():
    """The Gaussian likelihood of a constraint model: :func:`constraint_noise_prior`, floor 1e-6."""
    from gpytorch.constraints import GreaterThan
    from gpytorch.likelihoods import GaussianLikelihood

    return GaussianLikelihood(
        noise_prior=constraint_noise_prior(), noise_constraint=GreaterThan(1e-6)
    )


def model_parameters(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A copy of the model's raw hyper-parameters (what a warm start reloads)."""
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def load_parameters(model: torch.nn.Module, params: Mapping[str, torch.Tensor]) -> bool:
    """Copy ``params`` into ``model`` if they match its structure and are finite."""
    own = dict(model.named_parameters())
    if set(own) != set(params) or any(own[k].shape != params[k].shape for k in own):
        return False
    if not all(torch.isfinite(v).all() for v in params.values()):
        return False
    with torch.no_grad():
        for name, value in params.items():
            own[name].copy_(value)
    return True


class SharedTrainGP(SingleTaskGP):
    """BoTorch's ``SingleTaskGP`` whose batched predictions share one copy of the training inputs.

    An acquisition scores ``b`` candidates as ``b`` batches of one point; gpytorch then copies the
    ``n`` training rows into every batch (``b × n`` rows) and evaluates the kernel on them. Here
    the candidate–training covariance is the kernel of the candidates against the one training
    set, broadcast over the batch: the same posterior, without the copies (:mod:`common.fm_kernel`
    turns it into one matrix product).
    """

    _predictive_cache: tuple[torch.Tensor, ...] | None = None
    _moments: tuple | None = None  # (the factor's cache, min_var, its Moments)

    def posterior(
        self, X, output_indices=None, observation_noise=False, posterior_transform=None, **kwargs
    ):
        """BoTorch's posterior; for separate candidates (``X`` of shape ``(..., 1, d)``, what
        every acquisition here scores) computed directly from a cached Cholesky factor of the
        training covariance and the kernel's closed form against the training rows
        (:mod:`common.cross_kernel`; else its ``forward``, :func:`common.kernels.kernel_matrix`).

        The same mean ``m(x) + k(x, X) K̂⁻¹ (y − m)`` and variance ``k(x, x) − ‖L⁻¹ k(X, x)‖²``
        (Rasmussen and Williams 2006, Eq 2.25–2.26) as gpytorch's exact prediction strategy,
        without its lazy tensors: one candidate with its gradient at 100 observations of the
        9-parameter mixed space takes about half the time. Joint posteriors of several points,
        observation noise and transforms go through BoTorch.
        """
        train = self.train_inputs[0]
        if (
            output_indices is not None
            or observation_noise is not False
            or posterior_transform is not None
            or kwargs
            or X.dim() < 3
            or X.shape[-2] != 1
            or train.dim() != 2
        ):
            return super().posterior(
                X,
                output_indices=output_indices,
                observation_noise=observation_noise,
                posterior_transform=posterior_transform,
                **kwargs,
            )
        from gpytorch.distributions import MultivariateNormal
        from linear_operator.operators import DiagLinearOperator

        if self.training:
            self.eval()
        L, alpha = self._cholesky_and_weights()
        x = X.squeeze(-2)
        fast = self._predictive_cache[4]
        if fast is not None and x.dtype == DTYPE and x.device.type == "cpu":
            cross = fast(x)  # (..., n)
        else:
            cross = kernel_matrix(self.covar_module, x, train)
        mean = self.mean_module(x) + cross @ alpha
        # all candidates as the columns of one right-hand side (a batch of solves would copy L)
        v = torch.linalg.solve_triangular(L, cross.reshape(-1, L.shape[-1]).T, upper=False)
        explained = (v * v).sum(0).reshape(cross.shape[:-1])
        prior_var = self._prior_variance(x)
        variance = (prior_var - explained).clamp_min(0.0)
        mvn = MultivariateNormal(mean.unsqueeze(-1), DiagLinearOperator(variance.unsqueeze(-1)))
        return GPyTorchPosterior(distribution=mvn)

    def mean_and_sigma(
        self, X: torch.Tensor, min_var: float = 1e-12
    ) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The posterior mean and standard deviation (variance clamped at ``min_var``) at
        separate candidates ``X`` (``(..., 1, d)``), each ``(..., 1)``, as one autograd node
        (:mod:`common.predictive`); ``None`` where this model's kernel or mean has no such path
        (then use :meth:`posterior`)."""
        if X.dim() < 3 or X.shape[-2] != 1 or X.dtype != DTYPE or X.device.type != "cpu":
            return None
        moments = self.moments(min_var)
        if moments is None:
            return None
        from common.predictive import mean_and_sigma

        mean, sigma = mean_and_sigma(X.squeeze(-2), moments)
        return mean.unsqueeze(-1), sigma.unsqueeze(-1)

    def moments(self, min_var: float = 1e-12):
        """The posterior's :class:`common.predictive.Moments` (numpy mean and standard deviation
        at candidate rows, with their backward pass), or ``None`` where this model's kernel or
        mean has no such path."""
        from gpytorch.means import ConstantMean

        if not isinstance(self.mean_module, ConstantMean) or self.train_inputs[0].dim() != 2:
            return None
        if self.training:
            self.eval()
        L, alpha = self._cholesky_and_weights()
        cache = self._predictive_cache
        made = self._moments
        if made is not None and made[0] is cache and made[1] == min_var:
            return made[2]
        if cache[4] is None:
            return None
        from common.predictive import Moments

        constant = float(self.mean_module.constant.detach())
        moments = Moments(cache[4], L.detach().numpy(), alpha.detach().numpy(), constant, min_var)
        self._moments = (cache, min_var, moments)  # for this factor: one per model and data
        return moments

    def _prior_variance(self, x: torch.Tensor) -> torch.Tensor:
        """``k(x, x)`` of every candidate row; for a stationary kernel (gpytorch's
        ``is_stationary``: ``k(x, x) = k(0)``) that of one row, the same value for every row."""
        fast = self._predictive_cache[4] if self._predictive_cache is not None else None
        if fast is not None and x.dtype == DTYPE:  # constant in the continuous columns
            rows = x.detach().reshape(-1, x.shape[-1]).numpy()
            return torch.from_numpy(fast.part.diag(rows)).reshape(x.shape[:-1])
        if not self.covar_module.is_stationary:
            return kernel_matrix(self.covar_module, x, x, diag=True)
        row = x.reshape(-1, x.shape[-1])[:1]
        return kernel_matrix(self.covar_module, row, row, diag=True).expand(x.shape[:-1])

    def _cholesky_and_weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``L`` with ``L Lᵀ = K(X, X) + σ² I`` and ``K̂⁻¹ (y − m(X))``, computed once per model
        and training data in eval mode (without gradients: acquisitions differentiate in the
        candidates only). New training data (``set_train_data``, a model conditioned on
        fantasies, which copies this one) is a new factor."""
        X, y = self.train_inputs[0], self.train_targets
        cache = self._predictive_cache
        if cache is None or cache[0] is not X or cache[1] is not y:
            from linear_operator.utils.cholesky import psd_safe_cholesky

            from common.cross_kernel import cross_kernel

            with torch.no_grad():
                K = kernel_matrix(self.covar_module, X, X)
                K = K + self.likelihood.noise * torch.eye(len(y), dtype=K.dtype)
                L = psd_safe_cholesky(K)
                alpha = torch.cholesky_solve((y - self.mean_module(X)).unsqueeze(-1), L)
            fast = cross_kernel(self.covar_module, X)
            cache = self._predictive_cache = (X, y, L, alpha.squeeze(-1), fast)
        return cache[2], cache[3]

    def train(self, mode: bool = True):
        """Leaving eval mode drops the cached factor (hyper-parameters may change)."""
        if mode:
            self._predictive_cache = None
        return super().train(mode)

    def _get_test_prior_mean_and_covariances(self, train_inputs, test_inputs, **kwargs):
        (train,), (test,) = train_inputs, test_inputs
        if kwargs or train.dim() != 2 or test.dim() <= 2:
            return super()._get_test_prior_mean_and_covariances(train_inputs, test_inputs, **kwargs)
        prior = self.forward(test)  # the prior at the candidates
        covar = self.covar_module(test, train).evaluate_kernel()
        batch_shape = test.shape[:-2]
        test_test = prior.lazy_covariance_matrix.evaluate_kernel()
        return (prior.loc, test_test, covar, batch_shape, test.shape[-2:-1], type(prior))


def build_gp(
    X: np.ndarray,
    values: np.ndarray,
    make_kernel: Callable[[], Kernel],
    constraint: bool = False,
    warping: str = "copula",
) -> SingleTaskGP:
    """The (unfitted) GP of :func:`fit_gp`: warped, standardised, negated ``values`` at ``X``."""
    transform = constraint_standardise if constraint else WARPINGS[warping]
    return SharedTrainGP(
        torch.as_tensor(X, dtype=DTYPE),
        torch.as_tensor(-transform(np.asarray(values, dtype=float)), dtype=DTYPE)[:, None],
        covar_module=make_kernel(),
        likelihood=constraint_likelihood()
        if constraint
        else get_gaussian_likelihood_with_lognormal_prior(),
        outcome_transform=None,
    ).to(DTYPE)


def fit_gp(*args, **kwargs) -> tuple[SingleTaskGP, dict[str, torch.Tensor]]:
    """:func:`fit_gp_scored` (the same arguments) without the score: the model and its
    parameters for the next warm start."""
    model, params, _ = fit_gp_scored(*args, **kwargs)
    return model, params


def fit_gp_scored(
    X: np.ndarray,
    values: np.ndarray,
    make_kernel: Callable[[], Kernel],
    warm_start: Mapping[str, torch.Tensor] | None = None,
    warm_maxiter: int = FIT_MAXITER,
    constraint: bool = False,
    warping: str = "copula",
) -> tuple[SingleTaskGP, dict[str, torch.Tensor], float]:
    """A GP of the standardised, negated ``values`` at ``X``, hyper-parameters fitted by MAP.

    Tries a warm-started fit (from ``warm_start``, the parameters of a previous fit, at most
    ``warm_maxiter`` L-BFGS-B iterations), then a fit from the priors' defaults; if both fail it
    keeps the warm-start (or default) hyper-parameters unfitted and logs a warning. Returns the
    model, its parameters for the next warm start, and the MAP objective per observation there
    (``inf`` where it cannot be computed; what a choice among fits compares, without evaluating
    it again). Targets are warped by ``warping`` (a :data:`WARPINGS` name), or for a
    ``constraint`` affinely standardised with :func:`constraint_likelihood`'s noise.
    """
    starts = [warm_start, None] if warm_start is not None else [None]
    for start in starts:
        model = build_gp(X, values, make_kernel, constraint, warping)
        if start is not None and not load_parameters(model, start):
            continue
        maxiter = FIT_MAXITER if start is None else warm_maxiter
        try:
            loss = MAPObjective(model).minimise(maxiter)
        except Exception as err:  # numerical failure of the fit: try the next start
            warn(f"GP hyper-parameter fit failed ({err}); retrying from defaults.", cause="gp fit")
            continue
        if math.isfinite(loss) and all(torch.isfinite(p).all() for p in model.parameters()):
            model.eval()
            return model, model_parameters(model), loss
    model = build_gp(X, values, make_kernel, constraint, warping)
    if warm_start is not None:
        load_parameters(model, warm_start)
    warn("GP hyper-parameter fit failed; using unfitted hyper-parameters.", cause="gp defaults")
    loss = MAPObjective(model).value()
    model.eval()
    return model, model_parameters(model), loss
