"""The closed-form log expected hypervolume improvement (common.acquisition.hypervolume)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from common.acquisition.hypervolume import (
    hypercells,
    log_hypervolume_improvement,
    reference_point,
)
from common.models.gp import DTYPE

FRONT = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]])  # maximised


class Gaussian:
    """A stand-in model: mean = column ``i`` of the candidate, a fixed standard deviation."""

    def __init__(self, i: int, sd: float) -> None:
        self.i, self.sd = i, sd

    def mean_and_sigma(self, X: torch.Tensor, min_var: float):
        x = X.squeeze(-2)
        return x[..., self.i : self.i + 1], self.sd + 0.0 * x[..., :1]


def _monte_carlo_hvi(mean, sd, lower, upper, draws=400_000, seed=0) -> float:
    y = np.asarray(mean) + np.random.default_rng(seed).standard_normal((draws, len(mean))) * sd
    gain = np.clip(np.minimum(y[:, None, :], upper) - lower, 0.0, None)
    return float(np.prod(gain, axis=-1).sum(-1).mean())


def test_the_cells_tile_what_a_new_point_adds() -> None:
    ref = np.array([-0.1, -0.1])
    lower, upper = (c.numpy() for c in hypercells(FRONT, ref))
    for y in ([0.5, 0.5], [0.8, 0.7], [2.0, -0.05], [0.3, 0.2]):
        added = np.prod(np.clip(np.minimum(np.array(y), upper) - lower, 0, None), -1).sum()
        hv = lambda pts: _hv_2d(pts, ref)  # noqa: E731
        assert added == pytest.approx(hv(np.vstack([FRONT, y])) - hv(FRONT), abs=1e-12)


def _hv_2d(points: np.ndarray, ref: np.ndarray) -> float:
    """The dominated area of maximised 2-d ``points`` above ``ref``, by sweeping."""
    pts = points[np.argsort(-points[:, 0])]
    area, top = 0.0, ref[1]
    for x, y in pts:
        if y > top:
            area += (x - ref[0]) * (y - top)
            top = y
    return area


@pytest.mark.parametrize("mean", [(0.5, 0.5), (0.9, 0.2), (0.0, 1.3)])
def test_the_closed_form_equals_the_monte_carlo_expectation(mean) -> None:
    sd = np.array([0.3, 0.5])
    acqf = log_hypervolume_improvement([Gaussian(0, sd[0]), Gaussian(1, sd[1])], FRONT)
    value = float(acqf(torch.tensor([[mean]], dtype=DTYPE)).exp())
    expected = _monte_carlo_hvi(mean, sd, acqf.lower.numpy(), acqf.upper.numpy())
    assert value == pytest.approx(expected, rel=0.01)


def test_far_from_the_front_the_log_still_ranks_candidates_with_finite_gradients() -> None:
    acqf = log_hypervolume_improvement([Gaussian(0, 0.1), Gaussian(1, 0.1)], FRONT)
    X = torch.tensor([[[-5.0, -5.0]], [[-3.0, -3.0]], [[-3.0, 0.5]]], dtype=DTYPE)
    X.requires_grad_(True)
    values = acqf(X)
    assert torch.isfinite(values).all()
    assert values[0] < values[1] < values[2]
    (grad,) = torch.autograd.grad(values.sum(), X)
    assert torch.isfinite(grad).all() and (grad > 0).all()  # every step towards the front helps


def test_the_reference_lies_beyond_every_observation_not_only_the_front() -> None:
    observed = np.vstack([FRONT, [[-2.0, 0.2], [0.1, -1.0]]])
    ref = reference_point(observed)
    assert np.allclose(ref, [-2.0 - 0.3, -1.0 - 0.2])
    # so a point beyond the front's ends (more of objective 0, less of 1) still adds volume
    acqf = log_hypervolume_improvement([Gaussian(0, 1e-3), Gaussian(1, 1e-3)], observed)
    gain = float(acqf(torch.tensor([[[1.5, -0.5]]], dtype=DTYPE)).exp())
    assert gain == pytest.approx((1.5 - 1.0) * (-0.5 + 1.2), rel=1e-3)


def test_a_dominated_mean_gains_less_than_a_new_front_point() -> None:
    acqf = log_hypervolume_improvement([Gaussian(0, 0.05), Gaussian(1, 0.05)], FRONT)
    X = torch.tensor([[[0.3, 0.3]], [[0.8, 0.8]]], dtype=DTYPE)
    dominated, beyond = acqf(X)
    assert beyond > dominated


def _objective_models(front_rows=None):
    """Two GPs fitted to 30 rows of a 2-float space: ``(x, (1 − x)² + y)`` (maximised: negated
    inside the fit), and the rows."""
    from common.acquisition.hypervolume import ObjectiveModels
    from common.models.kernel_choice import fit_choosing
    from common.models.kernels.mixture import casmopolitan_kernels
    from common.space.mixed_space import Float, MixedSpace

    space = MixedSpace([Float("x", 0.0, 1.0), Float("y", 0.0, 1.0)])
    X = space.sample(30, np.random.default_rng(0))
    Y = np.stack([X[:, 0], (1.0 - X[:, 0]) ** 2 + X[:, 1]], 1)
    kernels = casmopolitan_kernels(list(space.cont_dims), [])
    models = [fit_choosing(X, Y[:, j], kernels)[0] for j in range(2)]
    rows = np.ones(30, bool) if front_rows is None else front_rows
    return ObjectiveModels(models, rows), X, Y


def test_the_numpy_pass_matches_autograd() -> None:
    objectives, X, _ = _objective_models()
    acqf = objectives.acquisition()
    rows = np.random.default_rng(1).random((9, 2))
    values, grad = acqf.value_and_gradient(rows)
    T = torch.as_tensor(rows, dtype=DTYPE).requires_grad_(True)
    expected = acqf.forward(T[:, None, :])
    (expected_grad,) = torch.autograd.grad(expected.sum(), T)
    assert np.allclose(values, expected.detach().numpy(), rtol=1e-9, atol=1e-9)
    assert np.allclose(grad, expected_grad.numpy(), rtol=1e-6, atol=1e-8)


def test_a_believed_busy_point_leaves_little_to_gain_beside_it() -> None:
    objectives, _, _ = _objective_models()
    busy = np.array([[0.3, 0.02]])  # near the front, unobserved
    beside = torch.as_tensor([[[0.31, 0.02]]], dtype=DTYPE)
    free = float(objectives.acquisition(busy, believe=False)(beside))
    believed = float(objectives.acquisition(busy, believe=True)(beside))
    assert believed < free - 1.0  # below a third of the expected gain


def test_only_the_front_rows_make_the_front() -> None:
    """An infeasible trial that dominates others is no part of the front to improve on."""
    _, X, Y = _objective_models()
    best = int(np.argmin(Y.sum(1)))
    feasible = np.ones(30, bool)
    feasible[best] = False
    at = torch.as_tensor(X[best][None, None, :], dtype=DTYPE)
    every, only = (_objective_models(rows)[0].acquisition()(at) for rows in (None, feasible))
    assert only > every + 1.0
