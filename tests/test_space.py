import math

import numpy as np
import pytest

from common.space.mixed_space import Categorical, Float, Integer, MixedSpace


def roundtrip(space: MixedSpace, config: dict) -> dict:
    return space.decode(space.encode([config]))[0]


def test_log_float_roundtrip_and_bounds() -> None:
    space = MixedSpace([Float("lr", 1e-7, 1.0, log=True)])
    for v in (1e-7, 3.3e-4, 1.0):
        assert roundtrip(space, {"lr": v})["lr"] == pytest.approx(v, rel=1e-12)
    # log warping: the encoded midpoint is the geometric mean
    assert space.decode(np.array([[0.5]]))[0]["lr"] == pytest.approx(math.sqrt(1e-7), rel=1e-9)


def test_stepped_float_snaps_to_grid_and_high_is_adjusted() -> None:
    space = MixedSpace([Float("x", -10.0, 10.2, step=0.5)])
    values = [c["x"] for c in space.decode(np.linspace(0, 1, 101)[:, None])]
    assert min(values) == -10.0 and max(values) == 10.0  # 10.2 is off the grid
    assert all(abs((v + 10.0) / 0.5 - round((v + 10.0) / 0.5)) < 1e-9 for v in values)


@pytest.mark.parametrize(
    "param",
    [Integer("n", 3, 9, step=2), Integer("n", 1, 100, log=True), Integer("n", -5, 5)],
)
def test_int_edges_are_reachable_and_typed(param: Integer) -> None:
    space = MixedSpace([param])
    configs = space.decode(np.array([[0.0], [1e-9], [1.0 - 1e-9], [1.0]]))
    assert configs[0]["n"] == param.low and configs[-1]["n"] == param.high
    assert all(type(c["n"]) is int for c in configs)
    grid = range(param.low, param.high + 1, param.step)
    assert all(c["n"] in grid for c in configs)
    for v in grid:  # every grid value round-trips and owns part of [0, 1]
        assert roundtrip(space, {"n": v})["n"] == v


def test_int_grid_cells_have_equal_width() -> None:
    space = MixedSpace([Integer("n", 0, 3)])
    u = np.linspace(0, 1, 4001)[:, None]
    counts = np.bincount([c["n"] for c in space.decode(u)])
    assert counts.min() / counts.max() > 0.99


def test_mixed_type_choices_keep_identity_and_type() -> None:
    obj = [1, 2]
    choices = (None, True, 1, 1.0, "a", obj, float("nan"))
    space = MixedSpace([Categorical("c", choices)])
    for i, choice in enumerate(choices):
        encoded = space.encode([{"c": choice}])
        assert encoded[0, 0] == i  # True, 1 and 1.0 stay distinct
        decoded = space.decode(encoded)[0]["c"]
        assert decoded is choice or (isinstance(choice, float) and math.isnan(decoded))
    with pytest.raises(ValueError, match="not one of the choices"):
        space.encode([{"c": "zzz"}])


def test_single_valued_parameters_are_not_modelled() -> None:
    space = MixedSpace([Float("a", 1.0, 1.0), Categorical("b", ("only",)), Integer("c", 0, 3)])
    assert space.dim == 1
    config = space.decode(np.array([[0.5]]))[0]
    assert config == {"a": 1.0, "b": "only", "c": 2}
    assert list(config) == ["a", "b", "c"]


def test_sample_is_reproducible_and_on_grid() -> None:
    space = MixedSpace([Float("x", 0, 1, step=0.25), Categorical("c", "abc"), Integer("n", 0, 2)])
    a = space.sample(50, np.random.default_rng(3))
    b = space.sample(50, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(space.round(a), a)
    assert set(a[:, space.cat_dims[0]]) <= {0.0, 1.0, 2.0}


@pytest.mark.parametrize(
    "make",
    [
        lambda: Float("x", 1.0, 0.0),
        lambda: Float("x", 0.0, 1.0, log=True),
        lambda: Float("x", 1.0, 2.0, log=True, step=0.1),
        lambda: Integer("n", 0, 10, log=True),
        lambda: Categorical("c", ()),
        lambda: MixedSpace([Float("x", 0, 1), Float("x", 0, 2)]),
    ],
)
def test_invalid_parameters_are_rejected(make) -> None:
    with pytest.raises(ValueError):
        make()


def test_grid_neighbours_are_one_step_away_and_clipped_at_the_bounds() -> None:
    space = MixedSpace(
        [
            Integer("n", 0, 4),
            Integer("k", 1, 100, log=True),
            Float("s", 0.0, 1.0, step=0.25),
            Float("x", 0.0, 1.0),
        ]
    )
    X = space.encode([{"n": 2, "k": 10, "s": 0.0, "x": 0.3}, {"n": 4, "k": 1, "s": 1.0, "x": 0.9}])
    below, above = space.grid_neighbours(X)
    assert [(c["n"], c["k"], c["s"]) for c in space.decode(below)] == [(1, 9, 0.0), (3, 1, 0.75)]
    assert [(c["n"], c["k"], c["s"]) for c in space.decode(above)] == [(3, 11, 0.25), (4, 2, 1.0)]
    # a free float has no grid: its own position on both sides
    np.testing.assert_allclose(below[:, 3], X[:, 3])
    np.testing.assert_allclose(above[:, 3], X[:, 3])
