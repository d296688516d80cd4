"""BO-FM's surrogate: a GP with the ModLap kernel, fitted by MAP with restarts.

Oh, Gavves, Welling, "Mixed variable Bayesian optimization with frequency modulated kernels",
UAI 2021, and the authors' code (ChangYong-Oh/FrequencyModulatedKernelBO). The reference fits
``ScaleKernel(ModLap)`` with a constant mean and Gaussian noise by maximising the marginal
likelihood plus the log priors (MAP), from 10 initialisations, the first the previous fit. Here:

- priors: α half-horseshoe(0.1), β half-horseshoe(2.0), lengthscales inverse-gamma(2, 0.5) (in
  z-score units, rescaled to our [0, 1] columns), constant mean N(0, 0.5), noise inverse-gamma(2,
  0.01), output scale log-normal(0, 3), all on standardised targets (a constraint's model: noise
  Gamma(1.1, 30), :func:`common.models.gp.constraint_noise_prior`);
- objective: the posterior density of the *log* of each positive hyper-parameter (the priors'
  densities times their Jacobian), maximised by scipy's L-BFGS-B over those logs (never sampling
  from the priors, so no global RNG is touched). The Jacobian matters: the horseshoe density is
  infinite at 0, and a plain MAP in log space drives β to 0 (every category uncorrelated with every
  other) and then stays there, its gradient vanishing; the reference's Adam, stopped early, never
  got that far. With it, the log-space mode of each prior is finite;
- restarts: every fit continues from the previous one (``WARM_MAXITER`` iterations). Without a
  warm start, and every ``RESTART_EVERY`` observations, ``N_SCREEN`` random initialisations drawn
  from the reference's ranges with the caller's generator are scored by the objective, and the
  best ``N_RANDOM_RESTARTS`` are refined too; the best optimum wins. Work is bounded by iteration
  and evaluation counts only, never by a clock, so a fit is a deterministic function of its inputs
  under any machine load.

Without discrete columns the ModLap kernel, defined on graphs of discrete values, is undefined (Oh,
Gavves, Welling, UAI 2021, §3); the model falls back to a Matérn-5/2 ARD kernel with BoTorch's
priors and the same fitting.

>>> model, params = fit_fm_gp(layout, Z, values, rng, warm_start=previous_params)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import torch
from botorch.models import SingleTaskGP
from gpytorch.kernels import Kernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.means import ConstantMean
from gpytorch.priors import LogNormalPrior, NormalPrior

from common.log import warn
from common.models.gp import (
    DTYPE,
    SharedTrainGP,
    constraint_noise_prior,
    load_parameters,
    model_parameters,
)
from common.models.kernels.frequency_modulated import (
    UNIT_SCALE,
    FMKernel,
    FMLayout,
    InverseGammaPrior,
    log_positive,
)
from common.models.kernels.matern import matern_kernel
from common.models.map_fit import MAPObjective
from common.models.warpings import constraint_standardise, standardise

N_SCREEN = 8  # random initialisations scored by the MAP objective at a full restart
N_RANDOM_RESTARTS = 1  # best-scored random initialisations refined by L-BFGS-B at a full restart
RESTART_EVERY = 10  # full restarts when the number of observations is a multiple of this
WARM_MAXITER = 10  # L-BFGS-B iterations from the previous fit (tracks the optimum as data grows)
RESTART_MAXITER = 25  # L-BFGS-B iterations from a random initialisation

# Bounds of the raw (log-space) hyper-parameters during the fit, by the parameter's name.
_RAW_BOUNDS = {
    "raw_alpha": (math.log(1e-4), math.log(1e2)),
    "raw_beta": (math.log(1e-4), math.log(1e3)),
    "raw_ls": (math.log(1e-3), math.log(1e1)),
    "raw_outputscale": (math.log(1e-2), math.log(1e2)),
    "raw_noise": (math.log(1e-6), math.log(1.0)),
    "raw_constant": (-3.0, 3.0),
}


_LOG_PARAMS = ("raw_alpha", "raw_beta", "raw_ls", "raw_outputscale", "raw_noise")


def fm_covariance(layout: FMLayout) -> Kernel:
    """``ScaleKernel(ModLap)`` with the reference's output-scale prior (Matérn without graphs)."""
    base = FMKernel(layout) if layout.graphs else matern_kernel(layout.cont_cols)
    return ScaleKernel(
        base,
        outputscale_prior=LogNormalPrior(0.0, 3.0),
        outputscale_constraint=log_positive(1e-4),
    )


def build_fm_gp(
    layout: FMLayout,
    Z: np.ndarray,
    values: np.ndarray,
    constraint: bool = False,
) -> SingleTaskGP:
    """The unfitted GP of standardised, negated ``values`` at rows ``Z`` (a ``constraint``'s:
    :func:`common.models.warpings.constraint_standardise` targets, Optuna's noise prior)."""
    transform = constraint_standardise if constraint else standardise
    train_X = torch.as_tensor(Z, dtype=DTYPE)
    train_Y = torch.as_tensor(-transform(np.asarray(values, dtype=float)), dtype=DTYPE)[:, None]
    noise_prior = constraint_noise_prior() if constraint else InverseGammaPrior(2.0, 0.01)
    likelihood = GaussianLikelihood(noise_prior=noise_prior, noise_constraint=log_positive(1e-6))
    model = SharedTrainGP(
        train_X,
        train_Y,
        likelihood=likelihood,
        covar_module=fm_covariance(layout),
        mean_module=ConstantMean(constant_prior=NormalPrior(0.0, 0.5)),
        outcome_transform=None,
    )
    return model.to(DTYPE)


def fit_fm_gp(
    layout: FMLayout,
    Z: np.ndarray,
    values: np.ndarray,
    rng: np.random.Generator,
    warm_start: Mapping[str, torch.Tensor] | None = None,
    *,
    full_restart: bool | None = None,
    constraint: bool = False,
) -> tuple[SingleTaskGP, dict[str, torch.Tensor]]:
    """A MAP-fitted BO-FM GP and its parameters (the next warm start); never raises on a bad fit.

    ``full_restart`` (default: no usable warm start, or ``len(values)`` a multiple of
    ``RESTART_EVERY``) adds the random restarts to the warm-started run; the best optimum wins.
    The work is bounded by iteration counts, so a fit is a deterministic function of its inputs.
    """
    model = build_fm_gp(layout, Z, values, constraint)
    objective = MAPObjective(model, _raw_bounds(model), _LOG_PARAMS)
    runs: list[tuple[dict[str, torch.Tensor], int]] = []
    if warm_start is not None and load_parameters(model, warm_start):
        runs.append((model_parameters(model), WARM_MAXITER))
    if full_restart is None:
        full_restart = not runs or len(values) % RESTART_EVERY == 0
    if full_restart:
        screened = []
        for _ in range(N_SCREEN):
            _initialise(model, rng)
            screened.append((objective.value(), model_parameters(model)))
        screened.sort(key=lambda item: item[0])
        runs += [(params, RESTART_MAXITER) for _, params in screened[:N_RANDOM_RESTARTS]]

    best_loss, best_params = math.inf, None
    for params, maxiter in runs:
        load_parameters(model, params)
        try:
            loss = objective.minimise(maxiter)
        except Exception as err:  # numerical failure of one run: try the next
            warn(f"BO-FM hyper-parameter fit failed ({type(err).__name__}: {err}).", cause="fm fit")
            continue
        if loss < best_loss:
            best_loss, best_params = loss, model_parameters(model)
    if best_params is None:
        warn(
            "BO-FM hyper-parameter fit failed; using default hyper-parameters.", cause="fm defaults"
        )
        model = build_fm_gp(layout, Z, values, constraint)
        best_params = model_parameters(model)
    load_parameters(model, best_params)
    model.eval()
    return model, best_params


# ------------------------------------------------------------------------------------ helpers
def _raw_bounds(model: SingleTaskGP) -> list[tuple[float | None, float | None]]:
    """:data:`_RAW_BOUNDS` per scalar parameter, in ``named_parameters`` order."""
    return [
        _RAW_BOUNDS.get(name.rsplit(".", 1)[-1], (None, None))
        for name, p in model.named_parameters()
        for _ in range(p.numel())
    ]


def _initialise(model: SingleTaskGP, rng: np.random.Generator) -> None:
    """Random hyper-parameters from the reference's restart ranges (lengthscales in [0,1] units)."""
    covar = model.covar_module
    base = covar.base_kernel
    with torch.no_grad():
        model.likelihood.noise = float(np.exp(rng.uniform(-4.0, -2.0)))
        model.mean_module.constant.fill_(float(rng.normal(0.0, 0.1)))
        covar.outputscale = float(np.exp(rng.normal(0.0, 0.5)))
        if isinstance(base, FMKernel):
            n_graphs = len(base.graph_cols)
            base.beta = torch.as_tensor(rng.uniform(1e-3, 2.0, n_graphs))
            if base.cont_cols:
                base.alpha = torch.as_tensor(rng.uniform(1e-3, 2.0, n_graphs))
                base.ls = torch.as_tensor(rng.uniform(0.25, 2.0, len(base.cont_cols)) * UNIT_SCALE)
        else:
            base.lengthscale = torch.as_tensor(rng.uniform(0.05, 1.0, base.lengthscale.shape))
