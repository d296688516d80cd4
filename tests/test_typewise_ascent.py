"""BO-FM's acquisition optimiser: type-wise ascent over graphs and a box."""

from __future__ import annotations

import itertools
import time

import numpy as np
import torch

from common.acquisition.functions import evaluate
from common.models.kernels.frequency_modulated import FMLayout
from common.optim.typewise_ascent import neighbours, typewise_ascent
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace

# k: a path graph of 10 values, c: a complete graph of 4, x: continuous
SPACE = MixedSpace([Integer("k", 0, 9), Categorical("c", "abcd"), Float("x", 0.0, 1.0)])
LAYOUT = FMLayout.from_space(SPACE)


class Peak(torch.nn.Module):
    """An acquisition with its single maximum 0 at k = 8, c = "b", x = 0.3."""

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        z = X[..., 0, :]
        return -((z[..., 0] - 8) ** 2) - 3.0 * (z[..., 1] != 1) - 10.0 * (z[..., 2] - 0.3) ** 2


class Wavy(torch.nn.Module):
    """Many local optima, with gradients in every column (the discrete ones must stay put)."""

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        z = X[..., 0, :]
        return torch.sin(1.7 * z[..., 0]) * torch.cos(2.3 * z[..., 1]) + torch.sin(9.0 * z[..., 2])


def test_neighbours_are_the_graph_edges():
    space = MixedSpace([Integer("k", 0, 9), Categorical("c", "abcd")])
    layout = FMLayout.from_space(space)
    rows, owner = neighbours(layout, np.array([[4.0, 2.0], [0.0, 0.0]]), np.random.default_rng(0))
    assert sorted(map(tuple, rows[owner == 0])) == [(3, 2), (4, 0), (4, 1), (4, 3), (5, 2)]
    assert sorted(map(tuple, rows[owner == 1])) == [(0, 1), (0, 2), (0, 3), (1, 0)]


def test_large_neighbourhoods_are_subsampled_reproducibly():
    layout = FMLayout.from_space(MixedSpace([Categorical("c", tuple(range(100)))]))
    start = np.array([[7.0]])
    rows, owner = neighbours(layout, start, np.random.default_rng(0), max_neighbours=16)
    again, _ = neighbours(layout, start, np.random.default_rng(0), max_neighbours=16)
    assert len(rows) == 16 and np.array_equal(rows, again) and (owner == 0).all()
    assert len(set(rows[:, 0])) == 16 and 7.0 not in rows[:, 0]


def test_hill_climb_moves_along_graph_edges():
    space = MixedSpace([Integer("k", 0, 9), Categorical("c", "abcd")])
    layout = FMLayout.from_space(space)

    class Acq(torch.nn.Module):  # peak at k = 8, c = "b": reachable only by ±1 steps in k
        def forward(self, X):
            return -((X[..., 0, 0] - 8) ** 2) - 3.0 * (X[..., 0, 1] != 1)

    Z, values = typewise_ascent(Acq(), layout, np.array([[1.0, 3.0]]), np.random.default_rng(0))
    assert Z.tolist() == [[8.0, 1.0]] and values[0] == 0.0


def test_ascent_reaches_the_maximiser_of_a_mixed_space_from_every_start():
    starts = np.array([[0.0, 0.0, 0.95], [9.0, 3.0, 0.0], [4.0, 2.0, 0.5]])
    Z, values = typewise_ascent(Peak(), LAYOUT, starts, np.random.default_rng(0))
    np.testing.assert_array_equal(Z[:, :2], [[8.0, 1.0]] * 3)
    np.testing.assert_allclose(Z[:, 2], 0.3, atol=1e-4)
    np.testing.assert_allclose(values, 0.0, atol=1e-6)
    np.testing.assert_allclose(values, evaluate(Peak(), Z))  # the values are of the rows


def test_discrete_values_stay_valid_and_values_only_improve():
    rng = np.random.default_rng(1)
    starts = LAYOUT.sample(12, rng)
    before = evaluate(Wavy(), starts)
    Z, values = typewise_ascent(Wavy(), LAYOUT, starts, rng)
    for col, graph in zip(LAYOUT.graph_cols, LAYOUT.graphs, strict=True):
        assert np.array_equal(Z[:, col], np.round(Z[:, col]))  # still a node of the graph
        assert Z[:, col].min() >= 0 and Z[:, col].max() <= graph.n - 1
    cont = list(LAYOUT.cont_cols)
    assert Z[:, cont].min() >= 0.0 and Z[:, cont].max() <= 1.0
    assert np.all(values >= before - 1e-12)
    np.testing.assert_allclose(values, evaluate(Wavy(), Z))
    assert SPACE.decode(LAYOUT.to_space(Z))  # decodes to valid configurations


def test_forbidden_rows_are_never_moved_to():
    space = MixedSpace([Integer("k", 0, 9), Categorical("c", "abcd")])
    layout = FMLayout.from_space(space)

    class Acq(torch.nn.Module):
        def forward(self, X):
            return -((X[..., 0, 0] - 8) ** 2) - 3.0 * (X[..., 0, 1] != 1)

    def forbidden(rows):  # the maximiser is already evaluated
        return (rows[:, 0] == 8) & (rows[:, 1] == 1)

    Z, _ = typewise_ascent(
        Acq(), layout, np.array([[1.0, 1.0]]), np.random.default_rng(0), forbidden=forbidden
    )
    assert Z[0].tolist() in ([7.0, 1.0], [9.0, 1.0])  # a neighbour of the peak, not the peak


def test_the_result_does_not_depend_on_the_clock(monkeypatch):
    """Only iteration counts bound the work: a process whose clocks leap forward (a loaded
    machine) ends at the same rows."""
    starts = LAYOUT.sample(6, np.random.default_rng(2))
    expected = typewise_ascent(Wavy(), LAYOUT, starts, np.random.default_rng(3))
    leaps = itertools.count()
    for name in ("process_time", "perf_counter", "monotonic"):
        real = getattr(time, name)
        monkeypatch.setattr(time, name, lambda real=real: real() + 1e4 * next(leaps))
    Z, values = typewise_ascent(Wavy(), LAYOUT, starts, np.random.default_rng(3))
    np.testing.assert_array_equal(Z, expected[0])
    np.testing.assert_array_equal(values, expected[1])
