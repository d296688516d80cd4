"""The acquisition helpers shared by the methods."""

import warnings

import numpy as np
import pytest
from botorch.exceptions.warnings import OptimizationWarning

import common.acquisition as acquisition


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
