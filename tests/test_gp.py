"""Fitting a GP on mixed inputs (:mod:`common.models.gp`): standardisation, MAP fit, warm starts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import common.models.gp as gp
import common.models.warpings as warpings
from common.models.gp import DTYPE, build_gp, fit_gp, load_parameters, model_parameters
from common.models.kernels.matern import matern_kernel
from common.models.kernels.mixture import casmopolitan_kernel, cocabo_kernel
from common.models.warpings import standardise


def _smooth_data(n: int = 25, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    return X, np.sin(3.0 * X[:, 0]) + 0.5 * np.cos(2.0 * X[:, 1])


@pytest.fixture(scope="module")
def fitted():
    """Smooth data and its fitted GP and hyper-parameters (fitted once: fits dominate the time)."""
    X, y = _smooth_data()
    model, params = fit_gp(X, y, lambda: matern_kernel([0, 1]))
    return X, y, model, params


def _mean_std(model, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with torch.no_grad():
        post = model.posterior(torch.as_tensor(X, dtype=DTYPE))
        return post.mean.numpy().reshape(-1), post.variance.sqrt().numpy().reshape(-1)


# ---------------------------------------------------------------------- standardisation
def test_copula_standardisation_is_robust_to_outliers() -> None:
    z = standardise(np.array([0.1, 0.2, 0.3, 1e6]))
    assert np.all(np.diff(z) > 0)  # order kept
    assert z.mean() == pytest.approx(0.0, abs=1e-12) and z.std() == pytest.approx(1.0)
    assert (z[1] - z[0]) > 0.3  # small differences survive a huge value
    np.testing.assert_array_equal(standardise(np.array([2.0, 2.0])), [0.0, 0.0])


def test_standardisation_keeps_the_order_and_ties_of_any_values() -> None:
    values = np.random.default_rng(1).standard_cauchy(40)
    values[[3, 7]] = values[11]  # a three-way tie
    z = standardise(values)
    assert np.array_equal(np.argsort(z, kind="stable"), np.argsort(values, kind="stable"))
    assert z[3] == z[7] == z[11]
    assert z.mean() == pytest.approx(0.0, abs=1e-12) and z.std() == pytest.approx(1.0)
    assert np.allclose(standardise(values * 1e3 + 5.0), z)  # only the ranks matter


def test_power_warping_keeps_order_and_magnitudes_whatever_the_offset_and_units() -> None:
    from common.models.warpings import power_standardise

    values = np.array([0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.5, 5.0])
    z = power_standardise(values)
    assert np.all(np.diff(z) > 0)  # order kept
    assert z.mean() == pytest.approx(0.0, abs=1e-12) and z.std() == pytest.approx(1.0)
    assert np.allclose(power_standardise(values * 1e3 + 123.0), z)  # offset and units do not matter
    # Magnitudes kept: 0.5 and 5.0 are far worse than the cluster near the optimum; the copula
    # spaces all eight values evenly, the power transform keeps the cluster's steps small.
    copula = standardise(values)
    assert (z[6] - z[5]) / (z[1] - z[0]) > 5.0 * (copula[6] - copula[5]) / (copula[1] - copula[0])
    # The outlier does not flatten the cluster into one value (a plain z-score would).
    assert (z[1] - z[0]) > 10.0 * (values[1] - values[0]) / values.std()


def test_power_warping_falls_back_to_ranks_where_it_cannot_be_fitted() -> None:
    from common.models.warpings import power_standardise

    for values in (np.array([1.0, 2.0]), np.array([3.0, 3.0, 3.0]), np.array([1.0, np.inf, 2.0])):
        np.testing.assert_array_equal(power_standardise(values), standardise(values))


def test_blend_warping_keeps_near_ties_apart_and_far_values_far() -> None:
    from common.models.warpings import blend_standardise, power_standardise

    values = np.array([0.0, 1e-4, 2e-4, 1.0, 1.1, 1.2, 1.3, 50.0])  # near-ties at the optimum
    z, power, copula = blend_standardise(values), power_standardise(values), standardise(values)
    assert np.all(np.diff(z) > 0)  # order kept
    assert z.mean() == pytest.approx(0.0, abs=1e-12) and z.std() == pytest.approx(1.0)
    assert np.allclose(blend_standardise(values * 7.0 - 3.0), z)
    assert (z[1] - z[0]) > 5.0 * (power[1] - power[0])  # near-ties resolved, as by the ranks
    assert (z[7] - z[6]) > 2.0 * (copula[7] - copula[6])  # the far value kept far, unlike ranks


def test_casmopolitans_warping_names_are_the_gp_modules() -> None:
    from common.methods.casmopolitan import options as casmopolitan

    assert set(casmopolitan.WARPINGS) == set(warpings.WARPINGS)


def test_a_gp_is_fitted_to_the_warping_it_names() -> None:
    from common.models.warpings import WARPINGS

    X, y = _smooth_data(12)
    for name, warp in WARPINGS.items():
        model = build_gp(X, np.exp(4 * y), lambda: matern_kernel([0, 1]), warping=name)
        np.testing.assert_allclose(model.train_targets.numpy(), -warp(np.exp(4 * y)))
    assert not np.allclose(WARPINGS["blend"](np.exp(4 * y)), WARPINGS["copula"](np.exp(4 * y)))


def test_the_power_warpings_log_jacobian_is_its_slope_at_each_value() -> None:
    """Moving one of many values by a little moves its warped value by the slope times that
    (the transform's fitted constants move by O(1/n) only)."""
    values = np.exp(np.random.default_rng(4).normal(size=400))
    warped = warpings.power_standardise(values)
    slope = warpings._power_slope(values)
    for i in (3, 50, 200):
        moved = values.copy()
        moved[i] += 1e-6 * values[i]
        numeric = (warpings.power_standardise(moved)[i] - warped[i]) / (1e-6 * values[i])
        assert numeric == pytest.approx(slope[i], rel=0.02)
    assert warpings.warping_log_jacobian("power", values) == pytest.approx(np.log(slope).mean())


def test_the_copulas_slope_follows_the_density_of_the_values() -> None:
    """Normal values are already normal quantiles: the rank map is about the identity after
    z-scoring, slope about 1 (an empirical CDF's slope is noisy, so on average and in the
    bulk); stretching the values by 10 divides the slope by 10; ties get a finite slope."""
    values = np.random.default_rng(5).normal(size=2000)
    bulk = np.abs(values) < 1.5
    slope = warpings._copula_slope(values)
    assert np.median(slope[bulk]) == pytest.approx(1.0, rel=0.15)
    np.testing.assert_allclose(warpings._copula_slope(10.0 * values), slope / 10.0)
    tied = np.r_[np.zeros(5), np.arange(1.0, 20.0)]
    assert np.all(np.isfinite(warpings._copula_slope(tied))) and np.all(
        warpings._copula_slope(tied) > 0
    )
    np.testing.assert_array_equal(warpings._copula_slope(np.ones(4)), np.ones(4))


def test_the_evidence_prefers_magnitudes_on_a_smooth_function_and_ranks_on_a_jumpy_one() -> None:
    """The choice between warpings by evidence (MAP objective less the log-Jacobian): a
    quadratic bowl keeps its magnitudes (the power transform), values whose ordering matters
    more than their sizes, a few steps with huge outliers, take the blend with ranks."""
    from common.models.kernel_choice import chosen, fit_choosing

    rng = np.random.default_rng(6)
    X = rng.random((40, 2))
    bowl = ((X - 0.3) ** 2).sum(axis=1)
    steps = np.floor(8 * X[:, 0]) + 0.01 * X[:, 1]
    steps[:3] += 1e6
    kernel = [lambda: matern_kernel([0, 1])]
    _, params = fit_choosing(X, bowl, kernel, warpings=("blend", "power"))
    assert chosen(params, 2) == 1
    _, params = fit_choosing(X, steps, kernel, warpings=("blend", "power"))
    assert chosen(params, 2) == 0


def test_average_ranks_are_scipys_ranks_with_ties() -> None:
    from scipy.stats import rankdata

    from common.models.warpings import average_ranks

    rng = np.random.default_rng(3)
    for size in (1, 2, 7, 50):
        values = rng.integers(0, 4, size).astype(float)  # many ties
        values[0] = np.inf
        np.testing.assert_array_equal(average_ranks(values), rankdata(values))
        values = rng.normal(size=size)
        np.testing.assert_array_equal(average_ranks(values), rankdata(values))


def test_warpings_do_not_import_scipy_stats() -> None:
    """A new worker's first suggestion should not pay for importing ``scipy.stats`` (0.2 s of
    CPU): the copula uses ``scipy.special`` only, the power transform ``scipy.optimize``."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from common.models.gp import WARPINGS\n"
        "for warp in WARPINGS.values(): warp(np.array([3.0, 1.0, 2.0, 2.0, 7.0]))\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------------- the fit
def test_fitted_gp_interpolates_noise_free_data(fitted) -> None:
    X, y, model, _ = fitted
    mean, std = _mean_std(model, X)
    target = -standardise(y)  # the model is of the standardised, negated values
    residual = mean - target
    assert np.abs(residual).mean() < 0.1
    assert 1.0 - (residual**2).sum() / ((target - target.mean()) ** 2).sum() > 0.97
    far = np.array([[3.0, 3.0]])  # far outside the data: the prior's uncertainty
    assert std.max() < 0.2 and _mean_std(model, far)[1][0] > 0.9


def test_fit_learns_which_categorical_matters() -> None:
    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, size=(40, 3)).astype(float)
    y = (X[:, 1] == 2).astype(float) + 0.01 * rng.standard_normal(40)
    model, _ = fit_gp(X, y, lambda: casmopolitan_kernel((), range(3)))
    grid = np.array([[0.0, v, 0.0] for v in (0.0, 1.0, 2.0)])
    mean, _ = _mean_std(model, grid)
    assert mean[2] < min(mean[0], mean[1]) - 1.0  # value 2 is the bad one (the model is of −y)


# ---------------------------------------------------------------------- factor extension
def _conditioned(X, y, params):
    model = build_gp(X, y, lambda: matern_kernel([0, 1]))
    assert load_parameters(model, params)
    return model.eval()


@pytest.mark.parametrize("grown", [1, 3])
def test_a_factor_extended_by_new_rows_is_the_factor_of_all_rows(
    fitted, grown, monkeypatch
) -> None:
    _, _, _, params = fitted
    X, y = _smooth_data(gp.EXTEND_FROM + grown, seed=4)
    earlier = _conditioned(X[:-grown], y[:-grown], params)
    record = earlier.factor_record()
    earlier.moments()  # its factor, as a suggestion computes it
    extended, anew = _conditioned(X, y, params), _conditioned(X, y, params)
    extended.extends(record)
    shapes = []
    kernel_matrix = gp.kernel_matrix

    def recorded(kernel, a, b):
        shapes.append((len(a), len(b)))
        return kernel_matrix(kernel, a, b)

    monkeypatch.setattr(gp, "kernel_matrix", recorded)
    L, alpha = extended._cholesky_and_weights()
    assert max(shapes) == (grown, len(X) - grown)  # only the new rows' covariances
    L_anew, alpha_anew = anew._cholesky_and_weights()
    assert max(shapes) == (len(X), len(X))
    torch.testing.assert_close(L, L_anew, rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(alpha, alpha_anew, rtol=1e-8, atol=1e-10)
    assert L.numpy().flags["F_CONTIGUOUS"]  # what LAPACK's solves take without a copy
    probe = np.random.default_rng(5).random((7, 2))
    np.testing.assert_allclose(_mean_std(extended, probe), _mean_std(anew, probe), rtol=1e-8)


def test_only_a_long_prefix_of_the_same_rows_is_extended(fitted) -> None:
    _, _, _, params = fitted
    X, y = _smooth_data(gp.EXTEND_FROM + 1, seed=4)
    short = _conditioned(X[:20], y[:20], params)
    other = _conditioned(X[1:-1], y[1:-1], params)  # not a prefix of X
    unfactored = _conditioned(X[:-1], y[:-1], params)
    records = [short.factor_record(), other.factor_record(), unfactored.factor_record()]
    short.moments()
    other.moments()
    for record in records:
        model = _conditioned(X, y, params)
        model.extends(record)
        assert model._extended_factor(model.train_inputs[0]) is None


# ---------------------------------------------------------------------- warm starts
def test_parameters_load_back_into_a_fresh_model(fitted) -> None:
    X, y, model, _ = fitted
    params = model_parameters(model)
    fresh = build_gp(X, y, lambda: matern_kernel([0, 1]))
    assert load_parameters(fresh, params)
    for name, value in model_parameters(fresh).items():
        assert torch.equal(value, params[name]), name
    fresh.eval()
    probe = np.random.default_rng(3).random((5, 2))
    np.testing.assert_allclose(_mean_std(fresh, probe)[0], _mean_std(model, probe)[0])
    name = next(iter(params))
    params[name].add_(1.0)  # a copy: changing it leaves the model alone
    assert not torch.equal(model_parameters(model)[name], params[name])


def test_mismatched_or_non_finite_parameters_are_refused(fitted) -> None:
    X, y, _, params = fitted
    other = build_gp(X[:, :1], y, lambda: matern_kernel([0]))  # one lengthscale, not two
    before = model_parameters(other)
    assert not load_parameters(other, params)
    bad = {k: v.clone() for k, v in params.items()}
    bad[next(iter(bad))].fill_(float("nan"))
    target = build_gp(X, y, lambda: matern_kernel([0, 1]))
    untouched = model_parameters(target)
    assert not load_parameters(target, bad)
    for model, expected in ((other, before), (target, untouched)):
        for name, value in model_parameters(model).items():
            assert torch.equal(value, expected[name]), name


def test_a_warm_started_fit_stays_at_its_optimum(fitted) -> None:
    X, y, _, params = fitted
    _, again = fit_gp(X, y, lambda: matern_kernel([0, 1]), warm_start=params)
    for name, value in again.items():
        assert torch.allclose(value, params[name], atol=1e-2), name


# ---------------------------------------------------------------------- failures
def test_a_failing_fit_falls_back_without_raising(fitted, monkeypatch, capture_logs) -> None:
    X, y, _, params = fitted

    def broken(*args, **kwargs):
        raise RuntimeError("cholesky failed")

    monkeypatch.setattr(gp.MAPObjective, "minimise", broken)
    caplog = capture_logs("mixbo")  # the core's logger outside an adapter
    model, kept = fit_gp(X, y, lambda: matern_kernel([0, 1]), warm_start=params)
    default, _ = fit_gp(X, y, lambda: matern_kernel([0, 1]))
    assert any("fit failed" in r.getMessage() for r in caplog.records)
    for name, value in kept.items():  # the warm start's hyper-parameters, unfitted
        assert torch.equal(value, params[name]), name
    for m in (model, default):
        mean, std = _mean_std(m, X)
        assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std))


def test_a_warm_started_fit_stops_at_its_own_cap(fitted, fit_caps) -> None:
    X, y, _, params = fitted
    fit_gp(X, y, lambda: matern_kernel([0, 1]), warm_maxiter=7)  # no warm start: the full cap
    fit_gp(X, y, lambda: matern_kernel([0, 1]), warm_start=params, warm_maxiter=7)
    fit_gp(X, y, lambda: matern_kernel([0, 1]), warm_start=params)
    assert fit_caps == [gp.FIT_MAXITER, 7, gp.FIT_MAXITER]


def test_a_constraints_threshold_separates_feasible_from_infeasible_on_the_model_scale():
    from common.models.warpings import constraint_standardise, constraint_threshold

    rng = np.random.default_rng(0)
    for scale in (1e-4, 1.0, 1e5):
        c = scale * rng.standard_t(2, size=40)  # heavy tails, both signs
        targets = -constraint_standardise(c)
        t = constraint_threshold(c)
        np.testing.assert_array_equal(targets >= t, c <= 0)
        assert np.isclose(targets.mean(), 0) and np.isclose(targets.std(), 1)
        clipped = np.maximum(c, 0.0)  # a violation amount: the feasible ones at exactly 0
        targets, t = -constraint_standardise(clipped), constraint_threshold(clipped)
        np.testing.assert_array_equal(targets >= t, clipped <= 0)
        assert targets[clipped == 0].min() > t  # with a margin: the zeros are not on the line


@pytest.mark.parametrize("kind", ["casmopolitan", "cocabo", "fm-mixed", "fm-discrete"])
def test_shared_training_inputs_give_gpytorchs_posterior_and_gradients(
    kind: str, plain_twin
) -> None:
    """Batched candidates are scored against one copy of the training rows; means, variances,
    joint covariances and their gradients in the candidates are those of a plain SingleTaskGP
    with the same hyper-parameters (which copies the training rows into every batch). The
    mixtures of overlap and Matern kernels are stationary (one row's prior variance serves all
    candidates), the FM kernels on graphs are not."""

    from common.methods.bofm.fm_model import build_fm_gp
    from common.models.kernels.frequency_modulated import FMLayout
    from common.space.mixed_space import Categorical, Float, Integer, MixedSpace

    rng = np.random.default_rng(5)
    dims = [Categorical("a", list("abcde")), Integer("n", 0, 6), Categorical("b", list("xyz"))]
    if kind != "fm-discrete":
        dims += [Float("x", 0.0, 1.0), Float("y", 0.0, 1.0)]
    space = MixedSpace(dims)
    X, C = space.sample(30, rng), space.sample(9, rng)
    y = rng.normal(size=30)
    if kind in ("casmopolitan", "cocabo"):
        make = casmopolitan_kernel if kind == "casmopolitan" else cocabo_kernel
        model = build_gp(X, y, lambda: make(space.cont_dims, space.cat_dims))
    else:
        layout = FMLayout.from_space(space)
        X, C = layout.to_model(X), layout.to_model(C)
        model = build_fm_gp(layout, X, y)
    with torch.no_grad():  # hyper-parameters away from their initial values
        for p in model.parameters():
            p.add_(torch.as_tensor(rng.normal(scale=0.3, size=tuple(p.shape)), dtype=DTYPE))
    plain = plain_twin(model)
    model.eval()
    assert type(model).__name__ == "SharedTrainGP"
    assert model.covar_module.is_stationary == (kind in ("casmopolitan", "cocabo"))
    for shape in [(9, 1), (3, 3), (9,)]:
        Xc = torch.as_tensor(C, dtype=DTYPE).reshape(*shape, -1).clone().requires_grad_(True)
        Xp = Xc.detach().clone().requires_grad_(True)
        ours, theirs = model.posterior(Xc), plain.posterior(Xp)
        assert torch.allclose(ours.mean, theirs.mean, rtol=1e-9, atol=1e-12)
        assert torch.allclose(
            ours.distribution.covariance_matrix,
            theirs.distribution.covariance_matrix,
            rtol=1e-8,
            atol=1e-12,
        )
        if kind == "fm-discrete":  # rounded to graph nodes: no gradient in the inputs
            continue
        (ours.mean.sum() + ours.variance.sum()).backward()
        (theirs.mean.sum() + theirs.variance.sum()).backward()
        assert Xp.grad.abs().sum() > 0
        assert torch.allclose(Xc.grad, Xp.grad, rtol=1e-7, atol=1e-10)


def test_gpytorch_asks_shared_train_gp_for_the_candidates_covariances(monkeypatch) -> None:
    """Joint posteriors of several candidates rest on gpytorch calling the hook SharedTrainGP
    overrides; if a gpytorch release stops calling it, this fails (the posterior would stay
    right, only slower). Separate candidates (``q = 1``) never reach gpytorch's prediction."""
    from common.models.gp import SharedTrainGP

    calls = []
    original = SharedTrainGP._get_test_prior_mean_and_covariances

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SharedTrainGP, "_get_test_prior_mean_and_covariances", counted)
    X, y = _smooth_data()
    model = build_gp(X, y, lambda: matern_kernel([0, 1]))
    model.eval()
    with torch.no_grad():
        model.posterior(torch.rand(5, 1, 2, dtype=DTYPE))
        assert not calls
        model.posterior(torch.rand(5, 3, 2, dtype=DTYPE))
    assert calls


def test_the_cached_factor_follows_the_hyper_parameters_and_the_data() -> None:
    """A model's separate-candidate posterior reuses its Cholesky factor in eval mode; a return
    to training mode (a fit) or new training data drops it, so predictions never lag behind."""
    X, y = _smooth_data()
    model = build_gp(X, y, lambda: matern_kernel([0, 1]))
    x = torch.rand(4, 1, 2, dtype=DTYPE, generator=torch.Generator().manual_seed(0))

    def mean() -> torch.Tensor:
        with torch.no_grad():
            return model.posterior(x).mean.reshape(-1)

    before = mean()
    model.train()
    with torch.no_grad():
        model.covar_module.raw_lengthscale.add_(1.0)
    model.eval()
    refitted = mean()
    assert not torch.allclose(before, refitted)
    model.set_train_data(model.train_inputs[0][:10], model.train_targets[:10], strict=False)
    assert not torch.allclose(refitted, mean())


# ---------------------------------------------------------------------- the MAP objective
@pytest.mark.parametrize("kind", ["casmopolitan", "cocabo", "constraint"])
def test_the_map_objective_is_gpytorchs_marginal_likelihood_with_priors(kind) -> None:
    """Same value (less ½ log 2π) and same gradient as gpytorch's ``ExactMarginalLogLikelihood``,
    away from the initial hyper-parameters, for each kernel and likelihood the methods fit."""
    import math

    from gpytorch.mlls import ExactMarginalLogLikelihood

    from common.models.kernels.mixture import cocabo_kernel
    from common.models.map_fit import MAPObjective

    rng = np.random.default_rng(1)
    X = np.c_[rng.random((30, 2)), rng.integers(0, 4, (30, 2))]
    y = X[:, 0] ** 2 + (X[:, 2] == 1) + 0.3 * X[:, 3]
    make = cocabo_kernel if kind == "cocabo" else casmopolitan_kernel
    model = build_gp(X, y, lambda: make([0, 1], [2, 3]), constraint=kind == "constraint")
    objective = MAPObjective(model)
    with torch.no_grad():  # every parameter moved; one with a floor (raw = value) scaled
        bounded = iter([lower is not None for lower, _ in objective.bounds])
        for p in objective.params:
            for i in range(p.numel()):
                step = rng.normal(0, 0.5)
                p.view(-1)[i] = (
                    p.view(-1)[i] * np.exp(step) if next(bounded) else p.view(-1)[i] + step
                )
    mll = ExactMarginalLogLikelihood(model.likelihood, model)

    def loss_and_grads(compute):
        model.zero_grad()
        loss = compute()
        loss.backward()
        return loss.item(), [p.grad.clone() for p in objective.params]

    ours, our_grads = loss_and_grads(objective._loss)
    theirs, their_grads = loss_and_grads(
        lambda: -mll(model(*model.train_inputs), model.train_targets)
    )
    assert ours + 0.5 * math.log(2 * math.pi) == pytest.approx(theirs, rel=1e-9)
    for a, b in zip(our_grads, their_grads, strict=True):
        assert torch.allclose(a, b, rtol=1e-7, atol=1e-10)
    assert any(b.abs().max() > 1e-3 for b in their_grads)  # a gradient to compare


def test_the_map_objective_keeps_the_noise_floor_as_a_bound() -> None:
    """A noise constraint without a transform is a bound of the raw parameter (BoTorch's rule)."""
    from common.models.map_fit import MAPObjective

    X, y = _smooth_data()
    X[:, 1] = X[:, 1] > 0.5  # a categorical column
    objective = MAPObjective(build_gp(X, y, lambda: casmopolitan_kernel([0], [1])))
    names = [n for n, p in objective.model.named_parameters() for _ in range(p.numel())]
    bounds = dict(zip(names, objective.bounds, strict=True))
    floor = objective.model.likelihood.noise_covar.raw_noise_constraint.lower_bound
    assert bounds["likelihood.noise_covar.raw_noise"] == (pytest.approx(float(floor)), None)
    assert bounds["covar_module.raw_outputscale"] == (None, None)  # softplus: unbounded raw


def test_a_floored_parameter_is_searched_on_the_log_of_its_distance_to_the_floor() -> None:
    """The optimiser's variable for a parameter bounded only below is ``log(x − floor)``:
    values and gradients map back exactly, and a parameter on its floor can leave it."""
    from common.models.map_fit import FloorLog

    floors = FloorLog(np.array([1e-4, -np.inf, 0.0]), np.array([np.inf, np.inf, 1.0]))
    x = np.array([3e-3, -2.0, 0.25])
    t = floors.variable(x)
    assert t[0] == pytest.approx(np.log(3e-3 - 1e-4)) and t[1:].tolist() == [-2.0, 0.25]
    assert np.allclose(floors.value(t), x, rtol=1e-12)
    assert np.allclose(floors.gradient(np.ones(3), x), [3e-3 - 1e-4, 1.0, 1.0])
    assert floors.bounds([(1e-4, None), (None, None), (0.0, 1.0)])[0] == (None, None)
    on_floor = floors.variable(np.array([1e-4, 0.0, 0.0]))[0]
    assert np.isfinite(on_floor) and floors.value(np.array([on_floor, 0, 0]))[0] > 1e-4


def test_a_line_search_probe_past_exps_range_is_a_failed_point_not_a_warning() -> None:
    """L-BFGS-B's line search can try a log-noise of a thousand; the MAP objective treats the
    infinite noise as a failed point (seen on Contamination with CASMOPOLITAN refitting every
    trial), and the user's study must not print numpy's overflow warning for it."""
    import warnings

    from common.models.map_fit import FloorLog

    floors = FloorLog(np.array([1e-4, -np.inf]), np.array([np.inf, np.inf]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = floors.value(np.array([1000.0, 5.0]))
    assert np.isinf(x[0]) and x[1] == 5.0


def test_a_fit_from_the_priors_converges_within_its_iteration_cap() -> None:
    """At 100 noise-free observations of a mixed space, a MAP fit from the priors' defaults
    stops because it converged, well before :data:`common.models.gp.FIT_MAXITER` (on the noise
    variance's own scale it crept towards small noises until the cap)."""
    from scipy import optimize

    from common.models.map_fit import MAPObjective

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.random((100, 4)), rng.integers(0, 5, (100, 2))])
    y = ((X[:, :4] - 0.3) ** 2).sum(1) + (X[:, 4] != 2) + 0.5 * (X[:, 5] == 1)
    model = build_gp(X, y, lambda: casmopolitan_kernel([0, 1, 2, 3], [4, 5]))
    results = []
    original = optimize.minimize

    def spy(*args, **kwargs):
        results.append(original(*args, **kwargs))
        return results[-1]

    optimize.minimize = spy
    try:
        MAPObjective(model).minimise(gp.FIT_MAXITER)
    finally:
        optimize.minimize = original
    (result,) = results
    assert result.nit < gp.FIT_MAXITER // 2 and "CONVERGENCE" in result.message


def test_a_model_conditioned_on_fantasies_does_not_reuse_the_parent_factor() -> None:
    """The kriging-believer policy conditions a model, whose factor is cached, on its own mean at
    busy points; gpytorch copies the model for that, and the copy predicts from all its data."""
    from botorch.models import SingleTaskGP

    X, y = _smooth_data()
    model = build_gp(X, y, lambda: matern_kernel([0, 1]))
    model.eval()
    C = torch.rand(6, 1, 2, dtype=DTYPE, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        before = model.posterior(C).variance.reshape(-1)  # fills the parent's cache
        busy = C[:2, 0]
        fantasy = model.condition_on_observations(busy, model.posterior(busy).mean)
        ours = fantasy.posterior(C).variance.reshape(-1)
        theirs = SingleTaskGP.posterior(fantasy, C).variance.reshape(-1)
    assert torch.allclose(ours, theirs, rtol=1e-8, atol=1e-12)
    assert (ours[:2] < 0.5 * before[:2]).all()  # the busy points are now known
