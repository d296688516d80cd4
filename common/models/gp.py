"""Fitting a GP on mixed inputs with BoTorch, robustly and warm-started.

Targets are warped (:data:`common.models.warpings.WARPINGS`: Gaussian-copula ranks by default),
standardised and
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

from common.log import warn
from common.models.cross_covariance import cross_kernel
from common.models.kernels.dense import kernel_matrix
from common.models.map_fit import MAPObjective
from common.models.predictive import Moments, mean_and_sigma
from common.models.warpings import WARPINGS, constraint_standardise
from common.reclaim import acyclic

DTYPE = torch.float64
FIT_MAXITER = 200  # iteration cap: the result does not depend on the machine's load
# A refit continued from the previous fit's optimum (CoCaBO's and CASMOPOLITAN's objective models)
# stops after this many L-BFGS-B iterations, and the next refit continues from there. With one or
# two more observations the optimum moves by O(1/n). Most of the 200 iterations an uncapped refit
# once ran were spent creeping along the noise variance's own scale towards its floor; searched on
# its log (common.models.map_fit.FloorLog) a refit converges in 30-50 iterations, and in studies
# that grow one observation at a time mostly within this cap, which left results within noise (see
# docs/decisions.md, "The default door's rule, measured"). It bounds the rest (a new worker's
# refits on a history it did not grow, a jump in the warped targets).
WARM_FIT_MAXITER = 25
# Training rows from which a model conditioned on the last fit's hyper-parameters extends the last
# model's Cholesky factor (SharedTrainGP.extends) instead of factoring anew. The extension equals
# the new factor up to rounding, which a different order of operations changes in the last bits:
# below this size a factor costs milliseconds, and factoring anew keeps a short study's
# suggestions the same whichever way its model was reached (a pickled copy, a restored searcher).
EXTEND_FROM = 200


"""The objective's target warpings by name (a constraint's targets are never warped)."""


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
    set, broadcast over the batch: the same posterior, without the copies
    (:mod:`common.models.kernels.frequency_modulated` turns it into one matrix product).
    """

    _predictive_cache: tuple[torch.Tensor, ...] | None = None
    _moments: tuple | None = None  # (the factor's cache, min_var, its Moments)
    _earlier: list | None = None  # the factor record this model's factor may extend
    _record: list | None = None  # [(training rows, factor)] once computed, for the next model

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        acyclic(self)  # freed by reference counting once discarded (:mod:`common.reclaim`)

    def factor_record(self) -> list:
        """Where this model leaves its training rows and Cholesky factor once it computes them,
        for a next model to extend (:meth:`extends`): a list holding ``(X, L)``, kept by whoever
        keeps it while the model itself is freed."""
        if self._record is None:
            self._record = []
        return self._record

    def extends(self, record: list) -> None:
        """Let this model's Cholesky factor start from the factor in ``record`` (an earlier
        model's :meth:`factor_record`): a model with the same hyper-parameters, conditioned on a
        prefix of this one's training rows (the last suggestion's, before the new
        observations). The factor of the old rows is the same matrix, so only the new rows'
        block is computed, O(n² m) for m new rows instead of the kernel matrix and factor of all
        n, O(n³). Anything else (fewer than :data:`EXTEND_FROM` rows, other rows first, a failed
        block) factors anew."""
        self._earlier = record

    def _extended_factor(self, X: torch.Tensor) -> torch.Tensor | None:
        """``L`` for ``X`` grown from :meth:`extends`'s earlier factor, or ``None``."""
        record, self._earlier = self._earlier, None
        if not record:
            return None
        X0, L0 = record[0]
        n0 = len(X0)
        if n0 < EXTEND_FROM or len(X) <= n0 or X.shape[1:] != X0.shape[1:]:
            return None
        if not torch.equal(X[:n0], X0):
            return None
        new = X[n0:]
        K10 = kernel_matrix(self.covar_module, new, X0)
        K11 = kernel_matrix(self.covar_module, new, new)
        K11 = K11 + self.likelihood.noise * torch.eye(len(new), dtype=K11.dtype)
        L10 = torch.linalg.solve_triangular(L0, K10.T, upper=False).T
        L11, info = torch.linalg.cholesky_ex(K11 - L10 @ L10.T)
        if info.item() != 0:
            return None
        L = L0.new_zeros((len(X), len(X))).mT  # column-major, as LAPACK's solves take it
        L[:n0, :n0] = L0
        L[n0:, :n0] = L10
        L[n0:, n0:] = L11
        return L

    def posterior(
        self, X, output_indices=None, observation_noise=False, posterior_transform=None, **kwargs
    ):
        """BoTorch's posterior; for separate candidates (``X`` of shape ``(..., 1, d)``, what
        every acquisition here scores) computed directly from a cached Cholesky factor of the
        training covariance and the kernel's closed form against the training rows
        (:mod:`common.models.cross_covariance`; else its ``forward``,
        :func:`common.models.kernels.dense.kernel_matrix`).

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
        (:mod:`common.models.predictive`); ``None`` where this model's kernel or mean has no such
        path (then use :meth:`posterior`)."""
        if X.dim() < 3 or X.shape[-2] != 1 or X.dtype != DTYPE or X.device.type != "cpu":
            return None
        moments = self.moments(min_var)
        if moments is None:
            return None

        mean, sigma = mean_and_sigma(X.squeeze(-2), moments)
        return mean.unsqueeze(-1), sigma.unsqueeze(-1)

    def moments(self, min_var: float = 1e-12):
        """The posterior's :class:`common.models.predictive.Moments` (numpy mean and standard
        deviation at candidate rows, with their backward pass), or ``None`` where this model's
        kernel or mean has no such path."""
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

            with torch.no_grad():
                L = self._extended_factor(X)
                if L is None:
                    K = kernel_matrix(self.covar_module, X, X)
                    K = K + self.likelihood.noise * torch.eye(len(y), dtype=K.dtype)
                    L = psd_safe_cholesky(K)
                alpha = torch.cholesky_solve((y - self.mean_module(X)).unsqueeze(-1), L)
            fast = cross_kernel(self.covar_module, X)
            cache = self._predictive_cache = (X, y, L, alpha.squeeze(-1), fast)
            if self._record is not None:
                self._record[:] = [(X, L)]
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
    cold_maxiter: int = FIT_MAXITER,
) -> tuple[SingleTaskGP, dict[str, torch.Tensor], float]:
    """A GP of the standardised, negated ``values`` at ``X``, hyper-parameters fitted by MAP.

    Tries a warm-started fit (from ``warm_start``, the parameters of a previous fit, at most
    ``warm_maxiter`` L-BFGS-B iterations), then a fit from the priors' defaults (at most
    ``cold_maxiter``); if both fail it keeps the warm-start (or default) hyper-parameters
    unfitted and logs a warning. Returns the
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
        maxiter = cold_maxiter if start is None else warm_maxiter
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
