"""The acquisition helpers shared by the methods."""

import warnings

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
