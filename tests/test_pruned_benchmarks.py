"""Pruned-study benchmarks: the learning-curve problems and ``mixbo-compare --pruner``."""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest

from common.space.mixed_space import Categorical, Float, Integer, MixedSpace
from mixbo_compare import cli
from mixbo_compare.problems import get_problem

PROBLEMS = ["lc-powerlaw", "lc-sgd-digits", "lc-mlp-breast-cancer", "lc-gbm-diabetes"]


@pytest.fixture(params=PROBLEMS)
def problem(request):
    if request.param != "lc-powerlaw":
        pytest.importorskip("sklearn")
    return get_problem(request.param)


def curves(problem, n: int = 12) -> np.ndarray:
    configs = problem.space.decode(problem.space.sample(n, np.random.default_rng(0)))
    return np.array([list(problem.curve(c)) for c in configs])


def test_learning_curves_are_deterministic_and_end_at_the_value(problem):
    config = problem.space.decode(problem.space.sample(1, np.random.default_rng(1)))[0]
    first, again = list(problem.curve(config)), list(problem.curve(config))
    assert first == again and len(first) == problem.steps
    assert problem(config) == first[-1]


def test_learning_curves_cross(problem):
    """Some configuration ahead after a few steps ends behind another one: a pruner can be
    wrong, which is what makes pruned trials worth modelling rather than trusting."""
    values = curves(problem)
    early = values[:, 2]
    final = values[:, -1]
    crossings = [
        (i, j)
        for i, j in itertools.combinations(range(len(values)), 2)
        if (early[i] - early[j]) * (final[i] - final[j]) < 0
    ]
    assert crossings


@pytest.mark.parametrize(
    ("name", "steps", "params"),
    [
        (
            "lc-mlp-breast-cancer",
            25,
            [
                Float("learning_rate_init", 1e-5, 1.0, log=True),
                Float("alpha", 1e-6, 1.0, log=True),
                Integer("width", 2, 256, log=True),
                Integer("batch_size", 16, 256, log=True),
                Categorical("activation", ("relu", "tanh", "logistic")),
                Categorical("solver", ("sgd", "adam")),
            ],
        ),
        (
            "lc-gbm-diabetes",
            20,
            [
                Float("learning_rate", 1e-3, 1.0, log=True),
                Float("subsample", 0.3, 1.0),
                Integer("max_depth", 1, 8),
                Integer("min_samples_leaf", 1, 64, log=True),
                Categorical("loss", ("squared_error", "absolute_error", "huber")),
                Categorical("max_features", ("all", "sqrt")),
            ],
        ),
    ],
)
def test_the_scikit_learn_curves_have_their_documented_steps_and_space(name, steps, params):
    pytest.importorskip("sklearn")
    problem = get_problem(name)
    assert problem.name == name and problem.steps == steps
    assert problem.space == MixedSpace(params)


def test_curves_that_overfit_rise_again():
    """Unlike lc-sgd-digits and lc-powerlaw, the network's log loss and the boosted trees' RMSE
    can end above their best step: a curve shape that makes stopping early right for once."""
    pytest.importorskip("sklearn")
    for name in ("lc-mlp-breast-cancer", "lc-gbm-diabetes"):
        values = curves(get_problem(name))
        assert (values[:, -1] > values.min(axis=1) + 1e-3).any(), name


def test_the_comparison_runs_pruned_studies_and_reports_equal_steps(tmp_path):
    out = tmp_path / "out"
    args = ["-p", "lc-powerlaw", "-s", "random", "tpe", "-n", "14", "--seeds", "1", "--jobs", "1"]
    assert cli.main([*args, "--pruner", "median", "-o", str(out), "--no-progress", "-q"]) == 0
    with open(out / "trials.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["problem"] for r in rows} == {"lc-powerlaw+median"}
    assert "PRUNED" in {r["state"] for r in rows}
    steps = [int(r["steps"]) for r in rows]
    assert max(steps) == get_problem("lc-powerlaw").steps and min(steps) < max(steps)
    assert "## At equal total steps" in (out / "results.md").read_text()


def test_the_default_runs_no_pruner():
    assert cli.parser().parse_args([]).pruner == "none"
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["--pruner", "asha"])


def test_a_hyperband_study_replays_the_same_brackets():
    """HyperbandPruner picks each trial's bracket from the study's name: the runner names it
    after the seed, so the same seed gives the same pruned study."""
    from mixbo_compare import runner

    problem = get_problem("lc-powerlaw")
    first, again = (runner.run(problem, "tpe", 3, 30, pruner="hyperband") for _ in range(2))
    assert np.array_equal(first.steps, again.steps) and first.pruned.any()
