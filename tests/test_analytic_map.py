"""The MAP objective's closed-form path (:mod:`common.models.analytic_map`): the value and gradient
of the autograd objective, for every kernel and likelihood the methods fit; anything else keeps
the autograd path."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from common.models.analytic_map import AnalyticMAP
from common.models.gp import build_gp, fit_gp
from common.models.kernels.mixture import casmopolitan_kernel, cocabo_kernel
from common.models.kernels.overlap import TransformedOverlapKernel
from common.models.kernels.scale import scaled
from common.models.map_fit import MAPObjective

KERNELS = {
    "casmopolitan-code": lambda: casmopolitan_kernel([0, 1, 2], [3, 4], "code"),
    "casmopolitan-paper": lambda: casmopolitan_kernel([0, 1, 2], [3, 4], "paper"),
    "cocabo": lambda: cocabo_kernel([0, 1, 2], [3, 4]),
    "continuous": lambda: casmopolitan_kernel([0, 1, 2], []),
    "categorical": lambda: casmopolitan_kernel([], [3, 4], "paper"),
    "one-weight": lambda: scaled(TransformedOverlapKernel(2, ard=False, active_dims=[3, 4])),
}


def _data(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.c_[rng.random((n, 3)), rng.integers(0, 4, (n, 2))]
    return X, np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + (X[:, 3] == 1) + 0.2 * rng.normal(size=n)


def _autograd(objective: MAPObjective, x: np.ndarray) -> tuple[float, np.ndarray]:
    objective._set(x)
    objective.model.zero_grad()
    loss = objective._loss()
    loss.backward()
    grads = [torch.zeros_like(p) if p.grad is None else p.grad for p in objective.params]
    return loss.item(), torch.cat([g.reshape(-1) for g in grads]).numpy()


@pytest.mark.parametrize("constraint", [False, True], ids=["objective", "constraint"])
@pytest.mark.parametrize("kind", list(KERNELS))
def test_the_closed_form_is_the_autograd_objective(kind: str, constraint: bool) -> None:
    """Same loss and gradient as the autograd objective at the defaults and at parameters moved
    away from them, every parameter included (each gradient entry is compared)."""
    X, y = _data()
    model = build_gp(X, y, KERNELS[kind], constraint=constraint)
    objective = MAPObjective(model)
    assert objective.analytic is not None
    rng = np.random.default_rng(3)
    lower = np.array([-np.inf if lo is None else lo for lo, _ in objective.bounds])
    x0 = objective._current()
    for step in (0.0, 0.5, 1.0):
        x = np.maximum(x0 + rng.normal(0.0, step, x0.shape), lower + 1e-3)
        theirs, their_grad = _autograd(objective, x)
        ours, our_grad = objective.analytic(x)
        assert ours == pytest.approx(theirs, rel=1e-7, abs=1e-9)  # gpytorch: ‖a‖² + ‖b‖² − 2ab
        assert np.allclose(our_grad, their_grad, rtol=1e-6, atol=1e-9)
        assert np.abs(their_grad).max() > 1e-3


def test_a_fit_reaches_the_optimum_of_the_autograd_fit() -> None:
    """Fitted by the closed form or by autograd, the same MAP optimum (to the optimiser's
    tolerance) on a mixed space."""
    X, y = _data(60, 1)
    make = KERNELS["casmopolitan-paper"]
    ours, _ = fit_gp(X, y, make)
    model = build_gp(X, y, make)
    objective = MAPObjective(model)
    objective.analytic = None
    objective.minimise(200)
    assert MAPObjective(ours).value() == pytest.approx(objective.value(), abs=1e-5)


@pytest.mark.parametrize("path", ["closed form", "autograd"])
@pytest.mark.parametrize("maxiter", [3, 200])
def test_a_fit_returns_the_objective_at_the_parameters_it_leaves(path: str, maxiter: int) -> None:
    """The loss ``minimise`` returns (which a choice among fits compares) is the objective a new
    evaluation finds at the fitted parameters, stopped early or converged, on either path (to
    rounding: on the autograd path the returned loss, computed with gradients, differed from a
    new evaluation in the last bit under ``OMP_NUM_THREADS=1``)."""
    X, y = _data(50, 2)
    model = build_gp(X, y, KERNELS["casmopolitan-code"])
    objective = MAPObjective(model)
    start = objective.value()
    if path == "autograd":
        objective.analytic = None
    loss = objective.minimise(maxiter)
    again = MAPObjective(model)
    if path == "autograd":
        again.analytic = None
    assert loss == pytest.approx(again.value(), rel=1e-12, abs=1e-12) and loss < start


def test_a_covariance_that_is_not_positive_definite_is_a_failed_point() -> None:
    """A line-search probe where the Cholesky factorisation fails is a large value with a zero
    gradient, as on the autograd path, so L-BFGS-B backs off."""
    from common.models.map_fit import FAILED

    X, y = _data()
    objective = MAPObjective(build_gp(X, y, KERNELS["continuous"]))
    x = objective._current()
    names = [name for name, p in objective.model.named_parameters() for _ in range(p.numel())]
    x[names.index("likelihood.noise_covar.raw_noise")] = -5.0  # a negative noise variance
    value, grad = objective._analytic(x)
    assert value == FAILED and not grad.any()


def _bofm_model(kind: str, seed: int = 5):
    from common.methods.bofm.fm_model import build_fm_gp
    from common.models.kernels.frequency_modulated import FMLayout
    from common.space.mixed_space import Categorical, Float, Integer, MixedSpace

    rng = np.random.default_rng(seed)
    dims = [Categorical("a", list("abcde")), Integer("n", 0, 6), Categorical("b", list("xyz"))]
    if kind in ("mixed", "constraint"):
        dims += [Float("x", 0.0, 1.0), Float("y", 0.0, 1.0)]
    if kind == "continuous":  # no graph: BO-FM's Matérn fallback
        dims = [Float("x", 0.0, 1.0), Float("y", 0.0, 1.0), Integer("m", 0, 100)]
    layout = FMLayout.from_space(MixedSpace(dims))
    rows = layout.to_model(MixedSpace(dims).sample(30, rng))
    return build_fm_gp(layout, rows, rng.normal(size=30), constraint=kind == "constraint")


@pytest.mark.parametrize("kept", [True, False], ids=["factors-kept", "factors-recomputed"])
@pytest.mark.parametrize("kind", ["mixed", "discrete", "continuous", "constraint"])
def test_the_closed_form_is_bofms_autograd_objective(kind: str, kept: bool, monkeypatch) -> None:
    """BO-FM's frequency-modulated kernel (a nominal complete graph, an ordinal path graph,
    continuous columns), its horseshoe, inverse-gamma and normal priors, log-space parameters
    with their log-Jacobian: the same loss and gradient as autograd, with the graph factors kept
    for the backward pass (a small study) or recomputed there (a large one)."""
    import common.models.kernels.frequency_modulated as frequency_modulated
    from common.methods.bofm.fm_model import _LOG_PARAMS, _raw_bounds

    if not kept:
        monkeypatch.setattr(frequency_modulated, "KEPT_FACTORS", 0)

    model = _bofm_model(kind)
    objective = MAPObjective(model, _raw_bounds(model), _LOG_PARAMS)
    assert objective.analytic is not None
    rng = np.random.default_rng(4)
    names = [n for n, p in model.named_parameters() for _ in range(p.numel())]
    on_value = np.array([n.endswith("raw_lengthscale") for n in names])  # no transform: > 0
    x0 = objective._current()
    for step in (0.0, 0.5, 1.0):
        x = x0 + rng.normal(0.0, step, x0.shape)
        x = np.where(on_value, np.abs(x) + 0.03, x)
        theirs, their_grad = _autograd(objective, x)
        ours, our_grad = objective.analytic(x)
        assert ours == pytest.approx(theirs, rel=1e-7, abs=1e-8)
        assert np.allclose(our_grad, their_grad, rtol=1e-6, atol=1e-9)
        assert np.abs(their_grad).max() > 1e-3


def test_models_with_other_parts_keep_the_autograd_path() -> None:
    """A kernel or a prior not listed here has no closed form: the objective uses autograd."""
    from gpytorch.kernels import RBFKernel
    from gpytorch.priors import LogNormalPrior

    X, y = _data()
    assert AnalyticMAP.for_model(build_gp(X, y, lambda: scaled(RBFKernel()))) is None
    model = build_gp(X, y, KERNELS["continuous"])
    transformed = LogNormalPrior(0.0, 1.0, transform=torch.exp)
    model.covar_module.register_prior("outputscale_prior", transformed, lambda m: m.outputscale)
    assert AnalyticMAP.for_model(model) is None
    assert MAPObjective(model).analytic is None


def test_the_priors_are_read_from_the_parameters_they_are_registered_on() -> None:
    """A prior whose closure is not the parameter this module expects (here a lengthscale prior
    re-registered on the outputscale) is not guessed at: the autograd path is kept."""
    from gpytorch.priors import GammaPrior

    X, y = _data()
    model = build_gp(X, y, KERNELS["continuous"])
    matern = model.covar_module.base_kernel
    matern.register_prior("lengthscale_prior", GammaPrior(3.0, 6.0), lambda m: m.lengthscale * 2)
    assert AnalyticMAP.for_model(model) is None
