"""The acquisition helpers shared by the methods."""

import warnings

import numpy as np
import pytest
from botorch.exceptions.warnings import OptimizationWarning

import common.acquisition as acquisition
from common.busy import BusyPolicy


def test_routine_line_search_warnings_are_silenced_and_others_passed_on(monkeypatch) -> None:
    def noisy(*args, **kwargs):
        with warnings.catch_warnings():  # BoTorch forces its warning through like this
            warnings.simplefilter("always", category=OptimizationWarning)
            warnings.warn("ABNORMAL line search", OptimizationWarning, stacklevel=2)
        warnings.warn("something else", RuntimeWarning, stacklevel=2)
        return "candidates"

    monkeypatch.setattr(acquisition, "gen_candidates_scipy", noisy)
    with pytest.warns(RuntimeWarning, match="something else") as record:
        assert acquisition.generate_candidates() == "candidates"
    assert not [w for w in record if issubclass(w.category, OptimizationWarning)]


def test_a_relaxed_optimum_is_snapped_to_the_grid_and_scored_there() -> None:
    import torch

    from common.space import Float, Integer, MixedSpace

    space = MixedSpace([Integer("n", 0, 9), Float("x", 0.0, 1.0)])

    class Peaked(torch.nn.Module):  # highest at n = 4.5 (between two integers), x = 0.5
        def forward(self, X):
            n = X[..., 0, 0] * 10 - 0.5  # the encoded column back to the integer scale
            return -((n - 4.5) ** 2) - (X[..., 0, 1] - 0.5) ** 2

    acqf = Peaked()
    x, value = acquisition.maximize_continuous(
        acqf, np.zeros(2), [0, 1], np.random.default_rng(0), snap=space.round
    )
    np.testing.assert_allclose(space.round(x[None])[0], x)  # on the grid
    assert value == pytest.approx(float(acquisition.evaluate(acqf, x[None])[0]))
    assert value == pytest.approx(-0.25, abs=1e-3)  # n = 4 or 5, not the relaxed 4.5


def test_an_excluded_row_is_not_returned_even_where_the_optimum_snaps_onto_it() -> None:
    import torch

    from common.configset import ConfigSet
    from common.space import Integer, MixedSpace

    space = MixedSpace([Integer("n", 0, 9)])

    class Peaked(torch.nn.Module):  # highest at n = 4; then 3 and 5
        def forward(self, X):
            n = X[..., 0, 0] * 10 - 0.5
            return -((n - 4.0) ** 2)

    seen = ConfigSet(space, space.encode([{"n": 4}]))
    rng = np.random.default_rng(0)
    x, _ = acquisition.maximize_continuous(Peaked(), np.zeros(1), [0], rng, snap=space.round)
    assert space.decode(x[None])[0] == {"n": 4}  # without exclusion: the optimum
    x, value = acquisition.maximize_continuous(
        Peaked(), np.zeros(1), [0], rng, snap=space.round, exclude=seen.contains
    )
    assert space.decode(x[None])[0]["n"] in (3, 5)  # the best row not yet seen
    assert value == pytest.approx(-1.0, abs=1e-6)


def test_cocabo_suggests_the_best_unseen_configuration_where_its_optimum_was_tried() -> None:
    from common.cocabo import CoCaBOOptions
    from common.history import History
    from common.space import Categorical, Integer, MixedSpace

    space = MixedSpace([Integer("n", 0, 9), Categorical("c", ["a", "b"])])
    configs = [{"n": n, "c": c} for n in (0, 2, 3, 4, 5, 6, 8) for c in ("a", "b")]
    values = [(cfg["n"] - 4) ** 2 + 0.1 * (cfg["c"] == "b") for cfg in configs]
    history = History.from_lists(configs, values)
    strategy = CoCaBOOptions(n_init=2).make(BusyPolicy())
    for seed in range(5):
        (config,) = strategy.suggest(space, history, 1, np.random.default_rng(seed))
        assert config not in configs


def test_the_analytic_acquisitions_are_botorchs() -> None:
    """Log EI and UCB, which skip BoTorch's per-call move to the candidates' device, give
    BoTorch's values and gradients."""
    import torch
    from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound

    from common.gp import DTYPE, fit_gp
    from common.kernels import casmopolitan_kernel

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.random((20, 2)), rng.integers(0, 3, 20)])
    model, _ = fit_gp(X, X[:, 0] + X[:, 2], lambda: casmopolitan_kernel([0, 1], [2]))
    C = torch.as_tensor(np.column_stack([rng.random((7, 2)), rng.integers(0, 3, 7)]), dtype=DTYPE)
    pairs = [
        (acquisition.log_expected_improvement(model, 0.3), LogExpectedImprovement(model, 0.3)),
        (acquisition.upper_confidence_bound(model, 2.0), UpperConfidenceBound(model, beta=4.0)),
    ]
    for ours, theirs in pairs:
        a, b = (C[:, None, :].clone().requires_grad_(True) for _ in range(2))
        va, vb = ours(a), theirs(b)
        assert torch.allclose(va, vb, rtol=1e-10)
        va.sum().backward(), vb.sum().backward()
        assert torch.allclose(a.grad, b.grad, rtol=1e-8, atol=1e-12)
