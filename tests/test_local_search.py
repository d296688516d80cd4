"""Maximising an acquisition inside a trust region (:mod:`common.optim.local_search`)."""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import pytest
import torch
from botorch.acquisition import AcquisitionFunction

from common.acquisition.functions import upper_confidence_bound
from common.methods.casmopolitan.trust_region import (
    Region,
    TrustRegionConfig,
    box_bounds,
    initial_state,
    region_of,
    replay,
)
from common.models.gp import fit_gp
from common.models.kernels.mixture import casmopolitan_kernel
from common.optim.local_search import (
    best_end,
    hamming_neighbours,
    local_optima,
    sample_in_region,
    snap_into_region,
)
from common.space.configset import ConfigSet
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace


# ---------------------------------------------------------------------- region geometry
def _mixed_space() -> MixedSpace:
    return MixedSpace(
        [Categorical(f"c{i}", tuple("abcd")) for i in range(8)]
        + [Float("x", 0.0, 1.0), Integer("n", 0, 6), Float("lr", 1e-4, 1.0, log=True)]
    )


def _best_row(acqf, space, region, seen, rng, **options):
    """The best end of the local searches and its value, ``None`` if none is unseen (what
    CASMOPOLITAN suggests without a second opinion)."""
    ends, values = local_optima(acqf, space, region, seen, rng, **options)
    best = best_end(values)
    return None if best is None else (ends[best], float(values[best]))


def test_samples_and_snapped_rows_stay_in_the_region() -> None:
    space = _mixed_space()
    rng = np.random.default_rng(0)
    centre = space.sample(1, rng)[0]
    lo, hi = box_bounds(centre[list(space.cont_dims)], 0.1, None)
    region = Region(centre, space.cat_dims, space.cont_dims, 2, lo, hi)
    X = sample_in_region(space, region, 500, rng)
    assert region.contains(X).all()
    assert set(region.distance(X)) == {0, 1, 2}
    # integer column: a box narrower than one grid cell snaps every point to the centre's value
    n_col = space.cont_dims[1]
    assert np.allclose(X[:, n_col], centre[n_col])
    assert np.array_equal(space.round(X), X)  # on the grids


def test_hamming_neighbours_are_all_single_changes() -> None:
    space = MixedSpace([Categorical("a", (0, 1, 2)), Categorical("b", (0, 1)), Float("x", 0, 1)])
    X = np.array([[0.0, 1.0, 0.3]])
    N = hamming_neighbours(X, space, np.random.default_rng(0), 100)[0]
    assert N.shape == (3, 3)  # 2 + 1 moves
    assert {tuple(r) for r in N} == {(1.0, 1.0, 0.3), (2.0, 1.0, 0.3), (0.0, 0.0, 0.3)}


class _Recorder(AcquisitionFunction):
    """An acquisition that records every row it is asked to score."""

    def __init__(self, inner: AcquisitionFunction):
        super().__init__(model=inner.model)
        self.inner = inner
        self.rows: list[np.ndarray] = []
        self.calls = 0

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        self.rows.append(X.detach().reshape(-1, X.shape[-1]).numpy().copy())
        return self.inner(X)


@functools.cache
def _fitted_model(space: MixedSpace, n: int, seed: int):
    """Data and a GP fitted to it, once per module run (the fits take most of the time)."""
    rng = np.random.default_rng(seed)
    X = space.sample(n, rng)
    y = rng.random(n) + (X[:, list(space.cat_dims)] == 1).sum(1)
    model, _ = fit_gp(X, y, lambda: casmopolitan_kernel(space.cont_dims, space.cat_dims))
    return X, y, model


def _fitted_acqf(space: MixedSpace, n: int, seed: int):
    X, y, model = _fitted_model(space, n, seed)
    return X.copy(), y.copy(), _Recorder(upper_confidence_bound(model))


@pytest.mark.parametrize("radius", [1, 3])
def test_every_categorical_candidate_is_inside_the_hamming_ball(radius: int) -> None:
    space = MixedSpace([Categorical(f"h{i}", tuple(range(5))) for i in range(15)])
    X, y, acqf = _fitted_acqf(space, 40, 0)
    state = replay(y, TrustRegionConfig.for_dims(15, 0, failure_tolerance=4))
    centre = X[int(np.argmin(y))]
    region = region_of(replace(state, hamming=radius), centre, space.cat_dims, ())
    x, _ = _best_row(acqf, space, region, ConfigSet(space, X), np.random.default_rng(0))
    rows = np.vstack(acqf.rows)
    assert len(rows) > 100
    assert (region.distance(rows) <= radius).all()
    assert 1 <= region.distance(x[None])[0] <= radius
    assert not ConfigSet(space, X).contains(x[None])[0]


def test_every_mixed_candidate_is_inside_the_trust_region() -> None:
    space = _mixed_space()
    X, y, acqf = _fitted_acqf(space, 40, 1)
    centre = X[int(np.argmin(y))]
    lo, hi = box_bounds(centre[list(space.cont_dims)], 0.3, np.array([0.2, 1.0, 3.0]))
    region = Region(centre, space.cat_dims, space.cont_dims, 2, lo, hi)
    x, value = _best_row(acqf, space, region, ConfigSet(space, X), np.random.default_rng(0))
    rows = np.vstack(acqf.rows)
    assert region.contains(rows).all()
    assert region.contains(x[None])[0]
    assert np.array_equal(space.round(x[None]), x[None])
    # no worse than the best random point of the region
    raw = sample_in_region(space, region, 256, np.random.default_rng(5))
    assert value >= acqf.inner(torch.as_tensor(raw)[:, None, :]).max().item() - 1e-6


def test_neighbourhoods_are_scored_in_batches() -> None:
    space = MixedSpace([Categorical(f"h{i}", tuple(range(5))) for i in range(25)])
    X, y, acqf = _fitted_acqf(space, 30, 2)
    region = Region(X[0], space.cat_dims, (), 20, np.empty(0), np.empty(0))
    _best_row(acqf, space, region, ConfigSet(space, X), np.random.default_rng(0))
    sizes = [len(r) for r in acqf.rows]
    assert max(sizes) >= 3 * 100 - 10  # 3 starts × 100 neighbours in one call
    assert acqf.calls <= 2 + 30  # raw scoring (+ centre) and one call per round


def test_exhausted_region_returns_none() -> None:
    space = MixedSpace([Categorical("a", (0, 1)), Categorical("b", (0, 1))])
    X = space.encode([{"a": a, "b": b} for a in (0, 1) for b in (0, 1)])
    model, _ = fit_gp(X, np.arange(4.0), lambda: casmopolitan_kernel((), space.cat_dims))
    region = Region(X[0], space.cat_dims, (), 2, np.empty(0), np.empty(0))
    rng = np.random.default_rng(0)
    assert _best_row(upper_confidence_bound(model), space, region, ConfigSet(space, X), rng) is None


def test_snap_keeps_integer_columns_inside_a_box_wider_than_one_cell() -> None:
    space = MixedSpace([Integer("n", 0, 9)])
    centre = space.encode([{"n": 4}])[0]
    region = Region(centre, (), (0,), 0, centre - 0.06, centre + 0.06)  # cells are 0.1 wide
    X = np.linspace(region.lower, region.upper, 50)
    snapped = snap_into_region(space, region, X)
    assert region.contains(snapped).all()
    assert set(np.round(snapped[:, 0], 6)) == {round(float(centre[0]), 6)}


class _PreferLarger(AcquisitionFunction):
    """An acquisition that grows with every numeric column (no model behind it)."""

    def __init__(self) -> None:
        torch.nn.Module.__init__(self)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return X.sum(dim=(-2, -1))


def test_a_collapsed_box_still_reaches_each_integers_grid_neighbours() -> None:
    space = MixedSpace([Integer("n", 0, 9), Integer("k", 1, 64, log=True), Float("x", 0.0, 1.0)])
    centre = space.encode([{"n": 4, "k": 8, "x": 0.5}])[0]
    state = replace(
        initial_state(TrustRegionConfig.for_dims(0, 3)), length=TrustRegionConfig.length_min
    )
    frozen = region_of(state, centre, (), space.cont_dims)
    below, above = space.grid_neighbours(centre[None])
    region = region_of(state, centre, (), space.cont_dims, reach=(below[0], above[0]))
    assert frozen.upper[2] == region.upper[2]  # a free float gets no floor
    rng = np.random.default_rng(0)
    seen = ConfigSet(space, centre[None])
    x, _ = _best_row(_PreferLarger(), space, frozen, seen, rng)
    config = space.decode(x[None])[0]
    assert (config["n"], config["k"]) == (4, 8) and config["x"] > 0.5  # only the float moves
    x, _ = _best_row(_PreferLarger(), space, region, seen, rng)
    config = space.decode(x[None])[0]
    assert (config["n"], config["k"]) == (5, 9) and config["x"] > 0.5
    assert region.contains(space.encode([{"n": 3, "k": 7, "x": 0.5}]))[0]


# ---------------------------------------------------------------------- the optimiser's result
@pytest.mark.parametrize("seed", [3, 4])
def test_result_beats_its_start_and_its_value_is_the_acquisitions(seed: int) -> None:
    space = _mixed_space()
    X, y, acqf = _fitted_acqf(space, 40, 1)
    state = replay(y, TrustRegionConfig.for_dims(len(space.cat_dims), len(space.cont_dims)))
    centre = space.sample(1, np.random.default_rng(seed))[0]  # not observed: a valid start
    region = region_of(
        replace(state, hamming=2, length=0.4), centre, space.cat_dims, space.cont_dims
    )
    seen = ConfigSet(space, X)
    assert not seen.contains(centre[None])[0]
    x, value = _best_row(acqf, space, region, seen, np.random.default_rng(seed))
    start = acqf.inner(torch.as_tensor(centre)[None, None]).item()
    actual = acqf.inner(torch.as_tensor(x)[None, None]).item()
    assert value == pytest.approx(actual, rel=1e-9, abs=1e-9)
    assert value >= start and region.contains(x[None])[0] and not seen.contains(x[None])[0]


def test_never_returns_a_seen_row_of_a_crowded_region() -> None:
    space = MixedSpace([Categorical(f"h{i}", (0, 1, 2)) for i in range(4)])
    X, y, acqf = _fitted_acqf(space, 20, 5)
    centre = X[int(np.argmin(y))]
    region = Region(centre, space.cat_dims, (), 1, np.empty(0), np.empty(0))
    ball = hamming_neighbours(centre[None], space, np.random.default_rng(0), 100)[0]
    seen = ConfigSet(space, np.vstack([X, ball[:-1]]))  # the whole radius-1 ball but one neighbour
    x, _ = _best_row(acqf, space, region, seen, np.random.default_rng(0))
    assert np.array_equal(x, ball[-1])


def test_local_optima_end_one_search_per_start_each_valued_by_the_acquisition() -> None:
    """Ten starts give ten ends, each inside the region, unseen and valued by the acquisition;
    ``best_end`` is the highest of them."""
    space = _mixed_space()
    X, y, acqf = _fitted_acqf(space, 40, 1)
    centre = X[int(np.argmin(y))]
    lo, hi = box_bounds(centre[list(space.cont_dims)], 0.3, np.array([0.2, 1.0, 3.0]))
    region = Region(centre, space.cat_dims, space.cont_dims, 2, lo, hi)
    seen = ConfigSet(space, X)
    ends, values = local_optima(acqf, space, region, seen, np.random.default_rng(2), n_starts=10)
    assert ends.shape == (10, space.dim) and np.isfinite(values).all()
    assert region.contains(ends).all() and not seen.contains(ends).any()
    actual = acqf.inner(torch.as_tensor(ends)[:, None, :]).detach().numpy().reshape(-1)
    assert values == pytest.approx(actual, rel=1e-9, abs=1e-9)
    assert values[best_end(values)] == values.max()
    assert best_end(np.full(3, -np.inf)) is None


def test_exact_ties_are_broken_at_random_not_by_the_order_of_the_choices() -> None:
    """Categories no observation has are exact ties under a nominal kernel; taking the first
    one listed would let the order of a categorical's choices decide (ackley5c against
    ackley5c~1 in the README). A unique highest value is always taken."""
    from common.optim.local_search import highest

    tied = np.array([-np.inf, 2.0, 1.0, 2.0, 2.0])
    picks = {highest(tied, np.random.default_rng(seed)) for seed in range(40)}
    assert picks == {1, 3, 4}
    assert {highest(np.array([0.0, 3.0, 2.0]), np.random.default_rng(s)) for s in range(9)} == {1}
