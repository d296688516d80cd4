"""The acquisition helpers shared by the methods."""

import numpy as np
import pytest

import common.acquisition.functions as acquisition
import common.optim.continuous as continuous
from common.batch.busy import BusyPolicy


def test_a_relaxed_optimum_is_snapped_to_the_grid_and_scored_there() -> None:
    import torch

    from common.space.mixed_space import Float, Integer, MixedSpace

    space = MixedSpace([Integer("n", 0, 9), Float("x", 0.0, 1.0)])

    class Peaked(torch.nn.Module):  # highest at n = 4.5 (between two integers), x = 0.5
        def forward(self, X):
            n = X[..., 0, 0] * 10 - 0.5  # the encoded column back to the integer scale
            return -((n - 4.5) ** 2) - (X[..., 0, 1] - 0.5) ** 2

    acqf = Peaked()
    x, value = continuous.maximize_continuous(
        acqf, np.zeros(2), [0, 1], np.random.default_rng(0), snap=space.round
    )
    np.testing.assert_allclose(space.round(x[None])[0], x)  # on the grid
    assert value == pytest.approx(float(acquisition.evaluate(acqf, x[None])[0]))
    assert value == pytest.approx(-0.25, abs=1e-3)  # n = 4 or 5, not the relaxed 4.5


def test_an_excluded_row_is_not_returned_even_where_the_optimum_snaps_onto_it() -> None:
    import torch

    from common.space.configset import ConfigSet
    from common.space.mixed_space import Integer, MixedSpace

    space = MixedSpace([Integer("n", 0, 9)])

    class Peaked(torch.nn.Module):  # highest at n = 4; then 3 and 5
        def forward(self, X):
            n = X[..., 0, 0] * 10 - 0.5
            return -((n - 4.0) ** 2)

    seen = ConfigSet(space, space.encode([{"n": 4}]))
    rng = np.random.default_rng(0)
    x, _ = continuous.maximize_continuous(Peaked(), np.zeros(1), [0], rng, snap=space.round)
    assert space.decode(x[None])[0] == {"n": 4}  # without exclusion: the optimum
    x, value = continuous.maximize_continuous(
        Peaked(), np.zeros(1), [0], rng, snap=space.round, exclude=seen.contains
    )
    assert space.decode(x[None])[0]["n"] in (3, 5)  # the best row not yet seen
    assert value == pytest.approx(-1.0, abs=1e-6)


def test_cocabo_suggests_the_best_unseen_configuration_where_its_optimum_was_tried() -> None:
    from common.methods.cocabo.options import CoCaBOOptions
    from common.space.history import History
    from common.space.mixed_space import Categorical, Integer, MixedSpace

    space = MixedSpace([Integer("n", 0, 9), Categorical("c", ["a", "b"])])
    configs = [{"n": n, "c": c} for n in (0, 2, 3, 4, 5, 6, 8) for c in ("a", "b")]
    values = [(cfg["n"] - 4) ** 2 + 0.1 * (cfg["c"] == "b") for cfg in configs]
    history = History.from_lists(configs, values)
    strategy = CoCaBOOptions(n_init=2).make(BusyPolicy())
    for seed in range(5):
        (config,) = strategy.suggest(space, history, 1, np.random.default_rng(seed))
        assert config not in configs


@pytest.mark.parametrize("best_f", [0.3, 8.0], ids=["near", "far-below-the-incumbent"])
@pytest.mark.parametrize("kind", ["casmopolitan", "cocabo"])
def test_the_analytic_acquisitions_are_botorchs(kind: str, best_f: float, plain_twin) -> None:
    """Log EI and UCB, computed from the model's one-node mean and standard deviation
    (:mod:`common.models.predictive`) with Log EI's ``log h`` as one node, give BoTorch's values and
    gradients on a plain gpytorch ``SingleTaskGP`` with the same hyper-parameters; also far
    below the incumbent, where Log EI's gradient needs its log-space form."""
    import torch
    from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound

    from common.models.gp import DTYPE, fit_gp
    from common.models.kernels.mixture import casmopolitan_kernel, cocabo_kernel

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.random((20, 2)), rng.integers(0, 3, 20)])
    make = casmopolitan_kernel if kind == "casmopolitan" else cocabo_kernel
    model, _ = fit_gp(X, X[:, 0] + X[:, 2], lambda: make([0, 1], [2]))
    plain = plain_twin(model)
    C = torch.as_tensor(np.column_stack([rng.random((7, 2)), rng.integers(0, 3, 7)]), dtype=DTYPE)
    C[0] = torch.as_tensor(X[4])  # a training row: the variance clamped at its floor
    pairs = [
        (
            acquisition.log_expected_improvement(model, best_f),
            LogExpectedImprovement(plain, best_f),
        ),
        (acquisition.upper_confidence_bound(model, 2.0), UpperConfidenceBound(plain, beta=4.0)),
    ]
    for ours, theirs in pairs:
        assert model.mean_and_sigma(C[:, None, :]) is not None  # the one-node path is taken
        a, b = (C[:, None, :].clone().requires_grad_(True) for _ in range(2))
        va, vb = ours(a), theirs(b)
        assert va.shape == vb.shape == (7,)
        assert torch.allclose(va, vb, rtol=1e-9)
        va.sum().backward(), vb.sum().backward()
        assert torch.allclose(a.grad, b.grad, rtol=1e-6, atol=1e-9)
        assert a.grad[:, 0, :2].abs().max() > 1e-3 and not a.grad[:, 0, 2].any()


def test_the_analytic_acquisitions_are_botorchs_with_bofms_kernel(plain_twin) -> None:
    """The same for BO-FM's frequency-modulated kernel (not stationary: each candidate's prior
    variance is its own), with an ordinal (path graph), a nominal and continuous columns."""
    import torch
    from botorch.acquisition import LogExpectedImprovement

    from common.methods.bofm.fm_model import build_fm_gp
    from common.models.gp import DTYPE
    from common.models.kernels.frequency_modulated import FMLayout
    from common.space.mixed_space import Categorical, Float, Integer, MixedSpace

    rng = np.random.default_rng(2)
    space = MixedSpace(
        [Categorical("a", list("abcd")), Integer("n", 0, 5), Float("x", 0, 1), Float("y", 0, 1)]
    )
    layout = FMLayout.from_space(space)
    X, C = layout.to_model(space.sample(25, rng)), layout.to_model(space.sample(8, rng))
    model = build_fm_gp(layout, X, rng.normal(size=25))
    with torch.no_grad():  # hyper-parameters away from their initial values
        for p in model.parameters():
            p.add_(torch.as_tensor(rng.normal(scale=0.3, size=tuple(p.shape)), dtype=DTYPE))
    model.eval()
    plain = plain_twin(model)
    assert not model.covar_module.is_stationary
    ours = acquisition.log_expected_improvement(model, 0.2)
    theirs = LogExpectedImprovement(plain, 0.2)
    C = torch.as_tensor(C, dtype=DTYPE)
    assert model.mean_and_sigma(C[:, None, :]) is not None
    a, b = (C[:, None, :].clone().requires_grad_(True) for _ in range(2))
    va, vb = ours(a), theirs(b)
    assert torch.allclose(va, vb, rtol=1e-9)
    va.sum().backward(), vb.sum().backward()
    assert torch.allclose(a.grad, b.grad, rtol=1e-6, atol=1e-9)
    assert a.grad[:, 0, 2:].abs().max() > 1e-3


@pytest.mark.parametrize("best_f", [0.3, 8.0], ids=["near", "far-below-the-incumbent"])
def test_log_eis_numpy_pass_gives_autograds_numbers_to_the_last_bit(best_f: float) -> None:
    """``value_and_gradient`` computes Log EI and its gradient in numpy, without autograd (what
    the local searches and L-BFGS-B call hundreds of times per suggestion): the same values and
    gradients, bit for bit, as the forward pass and autograd, so suggestions do not change; an
    acquisition without such a pass (UCB) goes through autograd, with the same results."""
    import torch

    from common.models.gp import DTYPE, fit_gp
    from common.models.kernels.mixture import casmopolitan_kernel

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.random((20, 2)), rng.integers(0, 3, 20)])
    model, _ = fit_gp(X, X[:, 0] + X[:, 2], lambda: casmopolitan_kernel([0, 1], [2]))
    C = np.column_stack([rng.random((7, 2)), rng.integers(0, 3, 7)])
    C[0] = X[4]  # a training row: the variance clamped at its floor
    for acqf, numpy_pass in (
        (acquisition.log_expected_improvement(model, best_f), True),
        (acquisition.upper_confidence_bound(model, 2.0), False),
    ):
        assert hasattr(acqf, "value_and_gradient") is numpy_pass
        x = torch.as_tensor(C, dtype=DTYPE)[:, None, :].requires_grad_(True)
        values = acqf(x)
        (grad,) = torch.autograd.grad(values.sum(), x)
        ours, our_grad = acquisition.value_and_gradient(acqf, C, [0, 1])
        assert np.array_equal(ours, values.detach().numpy())
        assert np.array_equal(our_grad, grad[:, 0, :2].numpy())
        assert np.array_equal(acquisition.evaluate(acqf, C), ours)
        assert np.abs(our_grad).max() > 1e-3


def test_log_ei_helper_is_botorchs_from_far_below_to_far_above_the_incumbent() -> None:
    """The numpy ``log h(u)`` has BoTorch's values in each of its branches (above ``u = −1``,
    the scaled-erfc branch, the asymptote past ``−10⁶``), and ``log_ndtr(u) − log h(u)`` its
    derivative's log."""
    import torch
    from botorch.acquisition.analytic import _log_ei_helper

    u = np.concatenate([-np.logspace(8, -3, 200), [-1.0, -1e6], np.linspace(-3.0, 40.0, 200)])
    theirs = _log_ei_helper(torch.as_tensor(u)).numpy()
    ours = acquisition.log_ei_helper(u)
    assert np.allclose(ours, theirs, rtol=1e-12, atol=0.0)
    moderate = torch.as_tensor(u[u > -1e3], dtype=torch.float64).requires_grad_(True)
    (g_theirs,) = torch.autograd.grad(_log_ei_helper(moderate).sum(), moderate)
    (g_ours,) = torch.autograd.grad(acquisition._LogH.apply(moderate).sum(), moderate)
    assert torch.allclose(g_ours, g_theirs, rtol=1e-8)


def test_ascend_moves_every_start_to_its_own_optimum_within_the_bounds() -> None:
    """Independent starts solved as one problem: each start's free columns reach its own
    maximiser (which depends on its fixed column) or the bound in the way; fixed columns keep
    their values; the values returned are the acquisition's at the rows returned."""
    import torch
    from botorch.acquisition import AcquisitionFunction

    class Bowl(AcquisitionFunction):  # maximum at x1 = column 0, x2 = 0.3
        def __init__(self) -> None:
            torch.nn.Module.__init__(self)

        def forward(self, X):
            x = X[..., 0, :]
            return -((x[:, 1] - x[:, 0]) ** 2) - (x[:, 2] - 0.3) ** 2

    starts = np.array([[0.2, 0.9, 0.9], [0.7, 0.1, 0.1], [1.5, 0.5, 0.5]])
    rows, values = continuous.ascend(Bowl(), starts, [1, 2], np.zeros(2), np.ones(2), 50)
    assert np.allclose(rows[:, 0], starts[:, 0])
    assert np.allclose(rows[:, 1], [0.2, 0.7, 1.0], atol=1e-5)  # the third: its upper bound
    assert np.allclose(rows[:, 2], 0.3, atol=1e-5)
    assert np.allclose(values, -((rows[:, 1] - rows[:, 0]) ** 2) - (rows[:, 2] - 0.3) ** 2)
