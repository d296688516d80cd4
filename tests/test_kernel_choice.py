"""Choosing a GP's kernel by the MAP objective (common.models.kernel_choice)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from common.models.gp import fit_gp
from common.models.kernel_choice import (
    CHALLENGER_MAXITER,
    chosen,
    condition_choice,
    fit_choosing,
    pack,
    unpack,
)
from common.models.kernels.matern import matern_kernel
from common.models.kernels.mixture import casmopolitan_kernels
from common.models.kernels.overlap import TransformedOverlapKernel
from common.models.kernels.scale import scaled
from common.models.map_fit import MAPObjective


def _on_column(j: int):
    return lambda: scaled(matern_kernel([j]))


def _data(n: int = 30, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    return X, np.sin(6 * X[:, 0])  # only the first column matters


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_the_kernel_the_data_support_is_kept_whatever_its_place(order) -> None:
    X, y = _data()
    makers = [_on_column(j) for j in order]
    model, params = fit_choosing(X, y, makers)
    kept = order.index(0)
    assert chosen(params, 2) == kept
    assert model.covar_module.base_kernel.active_dims.tolist() == [0]
    other, _ = fit_gp(X, y, makers[1 - kept])
    assert MAPObjective(model).value() < MAPObjective(other).value()


def test_conditioning_a_choice_rebuilds_the_kept_kernel_with_its_fit() -> None:
    X, y = _data()
    makers = [_on_column(1), _on_column(0)]
    model, params = fit_choosing(X, y, makers)
    again = condition_choice(X, y, makers, params)
    assert again is not None
    assert again.covar_module.base_kernel.active_dims.tolist() == [0]
    test = torch.as_tensor(np.random.default_rng(5).random((7, 2)), dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(again.posterior(test).mean, model.posterior(test).mean)


def test_each_alternative_warm_starts_from_its_own_last_fit(fit_caps) -> None:
    """The two kernels have differently shaped parameters, so a start taken from the other's
    fit would not load and the refit would run from the priors to the full cap."""
    import common.models.gp as gp

    X, y = _data(40)
    makers = [_on_column(0), lambda: scaled(matern_kernel([0, 1]))]
    _, params = fit_choosing(X[:30], y[:30], makers)
    fit_caps.clear()
    _, again = fit_choosing(X, y, makers, params, warm_maxiter=gp.WARM_FIT_MAXITER)
    assert fit_caps == [gp.WARM_FIT_MAXITER] * 2  # one warping: no challenger is capped
    for i in range(2):
        assert set(unpack(again, i)) == set(unpack(params, i))


def test_parameters_that_are_not_a_choices_are_refitted_not_loaded() -> None:
    X, y = _data()
    makers = [_on_column(0), _on_column(1)]
    _, single = fit_gp(X, y, makers[0])  # a fit stored before kernels were chosen
    assert chosen(single, 2) is None
    assert condition_choice(X, y, makers, single) is None
    _, params = fit_choosing(X, y, makers)
    assert condition_choice(X, y, makers, {**params, "choice": torch.tensor([2.0])}) is None
    assert condition_choice(X, y, makers, {**params, "choice": torch.tensor([0.5])}) is None


def test_packing_keeps_every_alternative_apart() -> None:
    fits = [{"a": torch.tensor([1.0])}, {"a": torch.tensor([2.0]), "b": torch.zeros(2)}]
    params = pack(fits, 1)
    assert chosen(params, 2) == 1
    assert unpack(params, 0) == {"a": fits[0]["a"]}
    assert set(unpack(params, 1)) == {"a", "b"}
    assert unpack(params, 2) is None and unpack(None, 0) is None


def test_casmopolitan_chooses_between_the_overlap_forms_only_with_categoricals() -> None:
    forms = []
    for make in casmopolitan_kernels([0], [1, 2]):
        overlap = [m for m in make().modules() if isinstance(m, TransformedOverlapKernel)]
        forms.append(overlap[0].form)
    assert forms == ["code", "paper"]
    (only,) = casmopolitan_kernels([0, 1], [])
    assert not any(isinstance(m, TransformedOverlapKernel) for m in only().modules())


def test_one_kernel_is_fitted_once_and_kept_without_a_comparison(monkeypatch) -> None:
    X, y = _data()
    import common.models.kernel_choice as kernel_choice

    fits, compared = [], []
    real = kernel_choice.fit_gp_scored
    monkeypatch.setattr(
        kernel_choice, "fit_gp_scored", lambda *a, **k: fits.append(a) or real(*a, **k)
    )
    monkeypatch.setattr(kernel_choice, "warping_log_jacobian", lambda *a: compared.append(a) or 0.0)
    model, params = fit_choosing(X, y, [_on_column(0)])
    assert chosen(params, 1) == 0 and len(fits) == 1 and not compared
    assert condition_choice(X, y, [_on_column(0)], params) is not None


def test_a_choice_between_warpings_conditions_on_the_kept_warpings_targets() -> None:
    """Every kernel is fitted to every warping's targets (warpings outer, kernels inner); the
    kept pair's model is rebuilt with its own warping's targets."""
    from common.models.warpings import WARPINGS

    X, y = _data()
    bowl = (y + 1.0) ** 2  # smooth: the power transform's magnitudes fit it (tests/test_gp.py)
    makers = [_on_column(1), _on_column(0)]
    model, params = fit_choosing(X, bowl, makers, warpings=("blend", "power"))
    assert chosen(params, 4) == 3  # the right column, the power transform
    assert all(unpack(params, i) is not None for i in range(4))
    np.testing.assert_allclose(model.train_targets.numpy(), -WARPINGS["power"](bowl))
    again = condition_choice(X, bowl, makers, params, ("blend", "power"))
    np.testing.assert_allclose(again.train_targets.numpy(), -WARPINGS["power"](bowl))
    assert condition_choice(X, bowl, makers, params) is None  # a 4-way choice is not a 2-way one


def test_a_refit_gives_the_kept_alternative_its_iterations_and_the_others_a_few(
    monkeypatch,
) -> None:
    """With a choice among warpings, the first fit fits every alternative from the priors; a
    refit continues the kept one for the caller's iterations and each challenger for
    CHALLENGER_MAXITER, and still compares all."""
    import common.models.kernel_choice as kernel_choice

    X, y = _data()
    makers = [_on_column(1), _on_column(0)]
    calls = []
    real = kernel_choice.fit_gp_scored

    def recording(X, values, make, warm_start, maxiter, **kwargs):
        calls.append((warm_start is not None, maxiter))
        return real(X, values, make, warm_start, maxiter, **kwargs)

    monkeypatch.setattr(kernel_choice, "fit_gp_scored", recording)
    _, params = fit_choosing(X, y, makers, None, 200, ("blend", "power"))
    assert calls == [(False, 200)] * 4
    kept = chosen(params, 4)
    calls.clear()
    _, again = fit_choosing(X, y, makers, params, 25, ("blend", "power"))
    expected = [(True, 25 if i == kept else CHALLENGER_MAXITER) for i in range(4)]
    assert calls == expected and chosen(again, 4) is not None
