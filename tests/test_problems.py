"""Test vectors of benchmarks.md §5 for the framework-free benchmark problems."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from scipy.optimize import minimize

from common import Categorical, Float, MixedSpace
from mixbo_compare.problems import get_problem
from mixbo_compare.problems.contamination import Contamination, contamination
from mixbo_compare.problems.pest import PestControl, pest_control
from mixbo_compare.problems.problem import Problem
from mixbo_compare.problems.synthetic import func2c_array, func3c_array


def _config(h: tuple[int, ...], x: tuple[float, ...]) -> dict[str, Any]:
    config: dict[str, Any] = {f"h{i}": v for i, v in enumerate(h, start=1)}
    config.update({f"x{i}": v for i, v in enumerate(x, start=1)})
    return config


def _stages(x: list[int]) -> dict[str, int]:
    return {f"x{i}": v for i, v in enumerate(x, start=1)}


# ---------------------------------------------------------------- synthetic (§5.2–5.5)
@pytest.mark.parametrize(
    ("h", "x", "expected"),
    [
        ((0, 0), (0.0, 0.0), 0.0066667),
        ((1, 1), (-0.0449, 0.3563), -0.2063257),
        ((2, 4), (0.5, -0.5), 0.228125),
        ((0, 3), (1.0, 1.0), 8.4707292),
        ((2, 1), (-1.0, 0.25), 0.9873958),
    ],
)
def test_func2c_vectors(h: tuple[int, ...], x: tuple[float, ...], expected: float) -> None:
    assert get_problem("func2c")(_config(h, x)) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("h", "x", "expected"),
    [
        ((0, 0, 0), (0.0, 0.0), 0.0066667),
        ((2, 4, 3), (0.5, -0.5), 0.5703125),
        ((0, 3, 2), (1.0, 1.0), 22.7388542),
        ((1, 0, 1), (-1.0, 0.25), 12.5383333),
    ],
)
def test_func3c_vectors(h: tuple[int, ...], x: tuple[float, ...], expected: float) -> None:
    assert get_problem("func3c")(_config(h, x)) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_func2c_func3c_optima(sign: float) -> None:
    x = (sign * 0.0449, sign * -0.35633)
    f2, f3 = get_problem("func2c"), get_problem("func3c")
    assert f2(_config((1, 1), x)) == pytest.approx(f2.optimum, abs=1e-5)
    assert f3(_config((1, 1, 0), x)) == pytest.approx(f3.optimum, abs=1e-5)
    # A local optimiser started there finds nothing lower than the stated optimum.
    res = minimize(lambda c: func2c_array([[1, 1]], [c])[0], x, bounds=[(-1, 1)] * 2)
    assert res.fun == pytest.approx(f2.optimum, abs=1e-7)
    res = minimize(lambda c: func3c_array([[1, 1, 0]], [c])[0], x, bounds=[(-1, 1)] * 2)
    assert res.fun == pytest.approx(f3.optimum, abs=1e-7)


def test_func3c_grid_never_below_optimum() -> None:
    grid = np.linspace(-1.0, 1.0, 81)
    c = np.array(list(itertools.product(grid, grid)))
    for h in itertools.product(range(3), range(5), range(4)):
        values = func3c_array(np.tile(h, (len(c), 1)), c)
        assert values.min() >= get_problem("func3c").optimum - 1e-7


@pytest.mark.parametrize(
    ("h", "x", "expected"),
    [
        ((0,) * 5, 0.0, 3.3375433),
        ((16,) * 5, 1.0, 3.6253849),
        ((8, 8, 8, 8, 7), 0.0, 0.3325937),
        ((3, 5, 7, 9, 11), 0.3, 3.2767594),
        ((8,) * 5, 0.5, 1.5706022),
        ((8,) * 5, 0.0, 0.0),
    ],
)
def test_ackley5c_vectors(h: tuple[int, ...], x: float, expected: float) -> None:
    assert get_problem("ackley5c")(_config(h, (x,))) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("b", "x", "expected"),
    [
        ((1,) * 50, (1.0, 1.0, 1.0), 3.6253849),
        ((1,) * 50, (0.0, 0.0, 0.0), 3.5310778),
        ((0,) * 50, (0.5, 0.5, 0.5), 0.7611657),
        (tuple(i % 2 for i in range(50)), (0.1, -0.2, 0.3), 2.6836575),
        ((0,) * 50, (0.0, 0.0, 0.0), 0.0),
    ],
)
def test_ackley53_vectors(b: tuple[int, ...], x: tuple[float, ...], expected: float) -> None:
    assert get_problem("ackley53")(_config(b, x)) == pytest.approx(expected, abs=1e-6)


def test_ackley_optima_are_zero() -> None:
    assert get_problem("ackley5c").optimum == 0.0
    assert get_problem("ackley53").optimum == 0.0
    assert get_problem("ackley5c")(_config((8,) * 5, (0.0,))) == pytest.approx(0.0, abs=1e-12)
    assert get_problem("ackley53")(_config((0,) * 50, (0.0,) * 3)) == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------- pest control (§5.7)
_PEST_INPUTS = {
    "all0": [0] * 25,
    "all1": [1] * 25,
    "all4": [4] * 25,
    "cycle0": [0, 1, 2, 3, 4] * 5,
    "cycle1": [1, 2, 3, 4, 0] * 5,
    "best": [3] * 24 + [0],
}


@pytest.mark.parametrize(
    ("seed", "key", "expected"),
    [
        (0, "all0", 22.27),
        (0, "all1", 20.08),
        (0, "all4", 12.57),
        (0, "cycle0", 17.92),
        (0, "cycle1", 17.06),
        (0, "best", 12.0316),
        (8733, "all0", 21.94),
        (8733, "all1", 20.03),
        (8733, "all4", 12.53),
        (8733, "cycle0", 18.10),
        (8733, "best", 11.9916),
    ],
)
def test_pest_reference_values(seed: int, key: str, expected: float) -> None:
    tol = 5e-5 if key == "best" else 5e-3
    assert pest_control(seed)(_stages(_PEST_INPUTS[key])) == pytest.approx(expected, abs=tol)


def test_pest_optimum_is_best_known() -> None:
    problem = get_problem("pest")
    assert problem.name == "pest"
    assert problem.optimum == pytest.approx(12.0316)
    assert problem(_stages(_PEST_INPUTS["best"])) == pytest.approx(problem.optimum, abs=5e-5)
    assert pest_control(8733).optimum == pytest.approx(11.9916)
    assert pest_control(1).optimum is None


def _pest_loop(x: list[int], seed: int) -> float:
    """Straightforward one-schedule simulation of §5.7, to check the vectorised version."""
    beta = {1: 2 / 7, 2: 3 / 7, 3: 3 / 7, 4: 5 / 7}
    tol = {1: 1 / 7, 2: 2.5 / 7, 3: 2 / 7, 4: 0.5 / 7}
    price = {1: 1.0, 2: 0.8, 3: 0.7, 4: 0.5}
    disc = {1: 0.2, 2: 0.3, 3: 0.3, 4: 0.0}
    cur = np.random.RandomState(seed).beta(1, 30, 100)
    total = 0.0
    for p in x:
        spread = np.random.RandomState(seed).beta(1, 17 / 3, 100)
        total += np.mean(cur > 0.1)
        if p:
            rate = np.random.RandomState(seed).beta(1, beta[p], 100)
            cur = (1 - rate) * cur
            beta[p] += tol[p] / 25
            total += price[p] * (1 - disc[p] / 25 * x.count(p))
        else:
            cur = cur + spread * (1 - cur)
    return total


def test_pest_vectorised_matches_loop() -> None:
    model = PestControl(0)
    X = np.random.default_rng(0).integers(0, 5, size=(20, 25))
    expected = [_pest_loop(row.tolist(), 0) for row in X]
    np.testing.assert_allclose(model.evaluate(X), expected, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- contamination (§5.8)
def test_contamination_random_draws() -> None:
    model = Contamination(6031)
    np.testing.assert_allclose(model.init_z[:3], [0.026790, 0.003172, 0.027818], atol=5e-7)
    np.testing.assert_allclose(model.spread[0, :3], [0.121000, 0.014429, 0.159879], atol=5e-7)
    np.testing.assert_allclose(model.restore[0, :3], [0.284664, 0.588393, 0.978365], atol=5e-7)


@pytest.mark.parametrize(
    ("x", "expected"),
    [([0] * 25, 23.26), ([1] * 25, 23.75), ([i % 2 for i in range(25)], 22.37)],
)
def test_contamination_reference_values(x: list[int], expected: float) -> None:
    assert get_problem("contamination")(_stages(x)) == pytest.approx(expected, abs=5e-3)


def test_contamination_optimum_and_regulariser() -> None:
    assert get_problem("contamination").optimum == pytest.approx(21.44)
    assert contamination(7596).optimum == pytest.approx(21.02)
    assert contamination(6031, lambda_reg=1e-2).optimum is None
    x = _stages([1] * 25)
    diff = contamination(6031, 1e-2)(x) - contamination(6031)(x)
    assert diff == pytest.approx(0.25, abs=1e-9)


# ---------------------------------------------------------------- registry and determinism
_KINDS = {
    "func2c": ([3, 5], 2),
    "func3c": ([3, 5, 4], 2),
    "ackley5c": ([17] * 5, 1),
    "ackley53": ([2] * 50, 3),
    "pest": ([5] * 25, 0),
    "contamination": ([2] * 25, 0),
}


@pytest.mark.parametrize("name", sorted(_KINDS))
def test_registry_builds_problem(name: str) -> None:
    problem = get_problem(name)
    assert isinstance(problem, Problem)
    assert problem.name == name
    choices, n_cont = _KINDS[name]
    cats = [p for p in problem.space.params if isinstance(p, Categorical)]
    floats = [p for p in problem.space.params if isinstance(p, Float)]
    assert len(problem.space) == len(choices) + n_cont
    assert [len(p.choices) for p in cats] == choices
    assert all(p.choices == tuple(range(len(p.choices))) for p in cats)
    assert len(floats) == n_cont
    assert all((p.low, p.high) == (-1.0, 1.0) for p in floats)


@pytest.mark.parametrize("name", sorted(_KINDS))
def test_deterministic_on_random_configs(name: str) -> None:
    problem = get_problem(name)
    configs = problem.space.decode(problem.space.sample(5, np.random.default_rng(0)))
    first = [problem(c) for c in configs]
    again = [get_problem(name)(c) for c in configs]
    assert first == again
    assert all(np.isfinite(first))
    # deterministic: no noise interface, and its defaults change nothing
    assert problem.mean is None and problem.seed_noise is None
    problem.reseed(1)
    assert [problem.noise_free(c) for c in configs] == first


def test_further_instances_are_named_not_registered() -> None:
    from mixbo_compare.problems import PROBLEMS, resolve

    pest = get_problem("pest@8733")
    assert pest.name == "pest_seed8733" and pest.optimum == pytest.approx(11.9916)
    config = pest.space.decode(pest.space.sample(1, np.random.default_rng(0)))[0]
    assert pest(config) == pest_control(8733)(config) != pest_control(0)(config)
    assert get_problem("contamination@1203").name.endswith("_seed1203")
    assert resolve("bbob-mixint-f3-d5") == (
        "mixbo_compare.problems.bbob_mixint",
        "bbob_mixint",
        {"function": 3, "dimension": 5},
    )
    assert resolve("bbob-mixint-f15-d10@2")[2] == {"function": 15, "dimension": 10, "instance": 2}
    assert "pest@8733" not in PROBLEMS and "bbob-mixint-f3-d5" not in PROBLEMS
    with pytest.raises(ValueError, match="has no instances"):
        resolve("func2c@1")
    with pytest.raises(ValueError, match="whole number"):
        resolve("pest@first")
    with pytest.raises(ValueError, match="unknown problem 'pests'"):
        resolve("pests")


def test_a_relabelled_problem_hides_which_label_is_best_and_keeps_every_value() -> None:
    """``NAME~K`` permutes each categorical's choices (a seeded permutation per parameter):
    the same space, the same values under other labels, floats and integers untouched, so
    Ackley-5C's optimum is no longer category 8 everywhere (the centre of the box); conditional
    problems refuse."""
    from common import Integer
    from mixbo_compare.problems.relabel import relabelled

    space = MixedSpace(
        [Categorical("a", ("x", "y", "z", "w")), Categorical("b", (0, 1, 2)), Integer("n", 0, 3)]
    )
    table = {("x", 0): 0.0, ("y", 0): 1.0, ("z", 0): 2.0, ("w", 0): 3.0}
    problem = Problem("toy", space, lambda c: table.get((c["a"], c["b"]), 9.0) + 10 * c["n"])
    values = {a: relabelled(problem, 3)({"a": a, "b": 0, "n": 1}) for a in "xyzw"}
    assert sorted(values.values()) != list(values.values())  # seed 3 moves the best label
    b0 = [b for b in (0, 1, 2) if relabelled(problem, 3)({"a": "x", "b": b, "n": 0}) < 9.0]
    assert len(b0) == 1  # one label of b now means 0
    again = relabelled(problem, 3)
    assert sorted(again({"a": a, "b": b0[0], "n": 2}) for a in "xyzw") == [20.0, 21.0, 22.0, 23.0]

    ackley, shuffled = get_problem("ackley5c"), get_problem("ackley5c~1")
    assert shuffled.name == "ackley5c~1" and shuffled.space == ackley.space
    assert shuffled.optimum == ackley.optimum
    centre = _config((8,) * 5, (0.0,))
    assert ackley(centre) == pytest.approx(ackley.optimum, abs=1e-12) and shuffled(centre) > 1.0
    rows = ackley.space.decode(ackley.space.sample(5, np.random.default_rng(0)))
    assert [get_problem("ackley5c~1")(c) for c in rows] == [shuffled(c) for c in rows]
    assert [get_problem("ackley5c~2")(c) for c in rows] != [shuffled(c) for c in rows]
    assert get_problem("pest@8733~2").name == "pest_seed8733~2"
    with pytest.raises(ValueError, match="whole number"):
        get_problem("ackley5c~one")
    with pytest.raises(ValueError, match="conditional"):
        get_problem("jenatton~1")


def test_noise_interface_delegates_to_the_declared_functions() -> None:
    seeds: list[int] = []
    space = MixedSpace([Float("x", 0.0, 1.0)])
    problem = Problem(
        "noisy",
        space,
        lambda c: c["x"] + 1.0,
        mean=lambda c: c["x"],
        seed_noise=seeds.append,
    )
    assert problem({"x": 0.25}) == 1.25 and problem.noise_free({"x": 0.25}) == 0.25
    problem.reseed(7)
    assert seeds == [7]


def test_jenatton_has_its_minimum_and_asks_one_branch() -> None:
    from mixbo_compare.problems import get_problem

    problem = get_problem("jenatton")
    best = {"x1": 0, "x2": 0, "x4": 0.0, "x8": 0.0}
    assert problem(best) == pytest.approx(problem.optimum)
    answers = {"x1": 1, "x3": 1, "x7": 0.5, "x9": 0.25}
    asked: list[str] = []
    config = problem.ask(lambda name: asked.append(name) or answers[name])
    assert asked == ["x1", "x3", "x7", "x9"] and config == answers
    assert problem(config) == pytest.approx(0.4 + 0.25 + 0.25)


def test_pressure_vessel_reference_design_is_near_feasible_at_the_best_known_cost() -> None:
    from mixbo_compare.problems import get_problem

    problem = get_problem("pressure-vessel")
    design = {"ts": 13, "th": 7, "R": 42.0984, "L": 176.6366}
    assert problem(design) == pytest.approx(problem.optimum, abs=0.01)
    assert max(problem.constraints(design)) < 1e-5
    assert max(problem.constraints({"ts": 1, "th": 1, "R": 100.0, "L": 100.0})) > 0


def test_the_runner_asks_conditional_branches_and_records_constraints() -> None:
    from mixbo_compare.problems import get_problem
    from mixbo_compare.runner import run

    result = run(get_problem("jenatton"), "casmopolitan", seed=0, n_trials=14)
    for params in result.params:
        side = "x2" if params["x1"] == 0 else "x3"
        assert side in params and ({"x2", "x3"} - {side}).isdisjoint(params)
    vessel = run(get_problem("pressure-vessel"), "random", seed=0, n_trials=20)
    problem = get_problem("pressure-vessel")
    for params, true in zip(vessel.params, vessel.true_values, strict=True):
        assert (max(problem.constraints(params)) > 0) == (true == float("inf"))
