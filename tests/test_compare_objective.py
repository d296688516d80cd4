"""``mixbo-compare --objective`` and ``compare``: a user's own Optuna objective compared, with a
verdict; every invalid input answered in one line."""

from __future__ import annotations

import csv
import math
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mixbo_compare import cli, verdict
from mixbo_compare.problems import DESCRIPTIONS, PROBLEMS
from mixbo_compare.problems.user_objective import ObjectiveError, load_objective

ROOT = Path(__file__).resolve().parents[1]
OBJECTIVES = ROOT / "examples" / "compare_objectives.py"
KINDS = {  # objective -> the extra arguments its kind needs
    "plain": [],
    "pruned": ["--pruner", "median"],
    "constrained": [],
    "accuracy_and_size": ["--directions", "maximize", "minimize"],
}


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def as_module(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The example objectives as an importable package ``userpkg.objectives``."""
    root = tmp_path_factory.mktemp("modules")
    (root / "userpkg").mkdir()
    (root / "userpkg" / "__init__.py").write_text("")
    shutil.copy(OBJECTIVES, root / "userpkg" / "objectives.py")
    return str(root)


def _compare(tmp_path: Path, spec: str, *extra: str, trials: int = 8) -> tuple[int, str, Path]:
    out = tmp_path / "out"
    argv = ["--objective", spec, "-s", "mixbo", "tpe", "--seeds", "2", "-n", str(trials)]
    argv += ["-o", str(out), "--jobs", "1", "--no-progress", "--quiet", *extra]
    code = cli.main(argv)
    md = (out / "results.md").read_text() if (out / "results.md").exists() else ""
    return code, md, out


@pytest.mark.parametrize("form", ["file", "module"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_of_objective_runs_from_a_file_and_a_module(
    kind: str, form: str, tmp_path: Path, as_module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if form == "module":
        monkeypatch.syspath_prepend(as_module)
        spec = f"userpkg.objectives:{kind}"
    else:
        spec = f"{OBJECTIVES}:{kind}"
    code, md, out = _compare(tmp_path, spec, *KINDS[kind], trials=12)
    assert code == 0
    runs = _rows(out / "runs.csv")
    assert {r["status"] for r in runs} == {"ok"} and len(runs) == 4
    trials = _rows(out / "trials.csv")
    assert len(trials) == 4 * 12
    assert all({"lr", "layers", "activation", "dropout"} <= set(eval(t["params"])) for t in trials)
    assert "## Verdict" in md
    if kind == "accuracy_and_size":
        assert "Multi-objective problems" in md and "no known front" in md
        assert list(out.glob("convergence_hypervolume_k1.png"))
        assert all(len(eval(t["objectives"])) == 2 for t in trials if t["state"] == "COMPLETE")
        return
    assert list(out.glob("convergence_trials_k1.png"))
    assert "your objective, no known optimum: the best value found (minimize)" in md
    if kind == "pruned":
        assert "At equal total steps" in md
        assert {t["state"] for t in trials} >= {"COMPLETE"}
        assert all(0 < int(t["steps"]) <= 20 for t in trials)
    if kind == "constrained":  # an infeasible trial keeps its value but never counts as the best
        infeasible = [t for t in trials if t["value"] and not t["true_value"]]
        assert infeasible
        for t in trials:
            params = eval(t["params"])
            assert (params["layers"] * (1 - params["dropout"]) > 3.5) == (t in infeasible)


def test_a_maximised_objective_is_reported_in_its_own_direction(tmp_path: Path) -> None:
    file = tmp_path / "acc.py"
    file.write_text(
        "def accuracy(trial):\n"
        "    x = trial.suggest_float('x', 0, 1)\n"
        "    c = trial.suggest_categorical('c', ['a', 'b'])\n"
        "    return 0.9 - (x - 0.3) ** 2 - 0.1 * (c == 'b')\n"
    )
    code, md, out = _compare(tmp_path, f"{file}:accuracy", "--directions", "maximize")
    assert code == 0
    assert "(accuracy, higher is better)" in md
    best = {
        (r["sampler"], r["seed"]): float(r["best_true_value"]) for r in _rows(out / "trials.csv")
    }
    # stored minimised (negated); shown as accuracies between 0 and 0.9
    assert all(-0.9 <= v < 0 for v in best.values())
    summary = next(line for line in md.splitlines() if line.startswith("| **mixbo** |"))
    median = float(summary.split("|")[2].strip(" *").split(" [")[0])
    assert 0 < median <= 0.9  # ... and shown as the accuracy


def test_workers_in_other_processes_load_the_objective_again(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["--objective", f"{OBJECTIVES}:plain", "-s", "tpe", "random", "--seeds", "1"]
    argv += ["-n", "5", "-o", str(out), "--jobs", "2", "--no-progress", "--quiet"]
    assert cli.main(argv) == 0
    assert {r["status"] for r in _rows(out / "runs.csv")} == {"ok"}


def test_compare_returns_the_table_in_a_notebook_style_script(tmp_path: Path) -> None:
    script = tmp_path / "notebook.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import math
            from mixbo_compare import compare

            def objective(trial):
                x = trial.suggest_float("x", -3, 3)
                n = trial.suggest_int("n", 1, 5)
                return (x - 1) ** 2 + abs(n - 2)

            table = compare(objective, samplers=("mixbo", "tpe"), n_trials=8, seeds=2,
                            out={str(tmp_path / "report")!r})
            assert len(table) == 4, table.rows
            for row in table:
                assert row["status"] == "ok" and row["trials"] == 8
                assert math.isfinite(row["best_value"]) and row["best_value"] >= 0
                assert row["sampler_seconds"] > 0
            assert table.to_pandas().shape[0] == 4
            assert "## Verdict" in table.report
            print("best", min(r["best_value"] for r in table))
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "report" / "results.md").exists()
    assert (tmp_path / "report" / "convergence_trials_k1.png").exists()


def test_compare_takes_several_objectives_and_refuses_a_pruner_for_them() -> None:
    from mixbo_compare import compare

    def two(trial):  # defined here: runs in this process (jobs=1)
        x = trial.suggest_float("x", 0, 1)
        return x, (1 - x) ** 2

    table = compare(two, samplers=("tpe",), n_trials=6, seeds=1, directions=["minimize"] * 2)
    assert len(table) == 1 and 0 <= table.rows[0]["hypervolume"] <= 1.21
    with pytest.raises(ObjectiveError, match="one objective"):
        compare(two, samplers=("tpe",), directions=["minimize"] * 2, pruner="median")
    with pytest.raises(ObjectiveError, match="importable by name"):
        compare(lambda t: t.suggest_float("x", 0, 1), samplers=("tpe",), jobs=2)
    with pytest.raises(ValueError, match="unknown sampler"):
        compare(two, samplers=("nope",))


# ------------------------------------------------------------------------ invalid input
def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    code = cli.main([*argv, "--no-progress", "--quiet", "--jobs", "1"])
    err = capsys.readouterr().err.strip()
    return code, err


@pytest.mark.parametrize(
    "case,expected",
    [
        ("missing-file", "no file"),
        ("missing-function", "has no function 'nope' (it has: accuracy_and_size"),
        ("missing-module", "no module named 'no_such_package'"),
        ("bad-spec", "PATH.py:FUNCTION"),
        ("import-error", "importing"),
        ("directions-alone", "--directions goes with --objective"),
        ("bad-direction", "minimize or maximize"),
    ],
)
def test_bad_objectives_get_one_line_before_anything_runs(
    case: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_package_here\n")
    argv = {
        "missing-file": ["--objective", str(tmp_path / "none.py") + ":f"],
        "missing-function": ["--objective", f"{OBJECTIVES}:nope"],
        "missing-module": ["--objective", "no_such_package.mod:f"],
        "bad-spec": ["--objective", "objective"],
        "import-error": ["--objective", f"{broken}:f"],
        "directions-alone": ["-p", "func2c", "--directions", "maximize"],
        "bad-direction": ["--objective", f"{OBJECTIVES}:plain", "--directions", "up"],
    }[case]
    code, err = _error(capsys, [*argv, "-o", str(tmp_path / "out")])
    assert code == 2
    assert expected in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "out" / "runs.csv").exists()  # nothing ran


def test_an_objective_that_raises_or_miscounts_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "bad.py"
    file.write_text(
        "def raises(trial):\n"
        "    trial.suggest_float('x', 0, 1)\n"
        "    return 1 / 0\n"
        "def two(trial):\n"
        "    return trial.suggest_float('x', 0, 1), 1.0\n"
    )
    code, err = _error(
        capsys,
        [
            "--objective",
            f"{file}:raises",
            "-n",
            "8",
            "--seeds",
            "1",
            "-s",
            "tpe",
            "mixbo",
            "-o",
            str(tmp_path / "a"),
        ],
    )
    assert code == 1 and len(err.splitlines()) == 1, err
    assert "ZeroDivisionError" in err and "first 5 trials" in err
    code, err = _error(
        capsys,
        [
            "--objective",
            f"{file}:two",
            "-n",
            "4",
            "--seeds",
            "1",
            "-s",
            "tpe",
            "-o",
            str(tmp_path / "b"),
        ],
    )
    assert code == 1 and len(err.splitlines()) == 1, err
    assert "returned 2 value(s) but --directions names 1" in err


def test_a_run_whose_samplers_are_all_unavailable_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _error(capsys, ["-p", "func2c", "-s", "hebo", "-o", str(tmp_path / "out")])
    assert code == 1
    assert "every sampler asked for was skipped" in err and "hebo" in err
    assert len(err.splitlines()) == 1


def test_the_plots_survive_a_folder_without_successful_runs(tmp_path: Path) -> None:
    from mixbo_compare import report

    code = cli.main(
        [
            "-p",
            "func2c",
            "-s",
            "tpe",
            "--seeds",
            "1",
            "-n",
            "3",
            "-o",
            str(tmp_path),
            "--jobs",
            "1",
            "--no-progress",
            "--quiet",
        ]
    )
    assert code == 0
    rows = _rows(tmp_path / "runs.csv")
    for row in rows:
        row["status"] = "failed"
    with open(tmp_path / "runs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    report.write_report(tmp_path)  # once: ValueError "number sections must be larger than 0"


def test_loading_an_objective_by_file_and_by_module(as_module: str, monkeypatch) -> None:
    assert load_objective(f"{OBJECTIVES}:plain").__name__ == "plain"
    monkeypatch.syspath_prepend(as_module)
    assert load_objective("userpkg.objectives:pruned").__name__ == "pruned"


def test_list_describes_every_problem_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert set(DESCRIPTIONS) == set(PROBLEMS)
    assert cli.main(["--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    for name in PROBLEMS:
        line = next(line for line in listed if line.split()[:1] == [name])
        assert DESCRIPTIONS[name] in line and "trials" in line
    assert any("--objective" in line for line in listed)


# ------------------------------------------------------------------------ the verdict
def test_a_known_difference_is_significant_and_none_is_not() -> None:
    rng = np.random.default_rng(0)
    better = {seed: float(v) for seed, v in enumerate(rng.normal(0.0, 1.0, 10))}
    worse = {seed: float(v) for seed, v in enumerate(rng.normal(3.0, 1.0, 10))}
    same = {seed: float(v) for seed, v in enumerate(rng.normal(0.0, 1.0, 10))}
    found = {v.sampler: v for v in verdict.against_best_other({"a": better, "b": worse})}
    assert found["a"].rival == "b" and found["a"].significant and found["a"].p_value < 0.01
    assert found["a"].wins >= 9 and "significantly better" in found["a"].sentence()
    assert found["b"].significant and "significantly worse" in found["b"].sentence()
    tied = {v.sampler: v for v in verdict.against_best_other({"a": better, "c": same})}
    assert not tied["a"].significant and tied["a"].p_value > 0.05
    assert "no significant difference" in tied["a"].sentence()


def test_too_few_seeds_are_said_plainly() -> None:
    assert verdict.smallest_p(3, 3) == pytest.approx(0.1)
    assert verdict.too_few(3, 3) and not verdict.too_few(4, 4)
    # a complete separation on 3 seeds each is still "too few to tell", not "no difference"
    found = verdict.against_best_other({"a": {0: 0.0, 1: 0.1, 2: 0.2}, "b": {0: 5, 1: 6, 2: 7}})
    assert all(v.too_few and not v.significant for v in found)
    assert "too few seeds to tell" in found[0].sentence()
    assert verdict.p_value([1.0, 1.0], [1.0, 1.0]) == 1.0


def test_trials_to_target() -> None:
    curves = [np.array([5.0, 3.0, 1.0]), np.array([4.0, 1.0, 0.5]), np.array([9.0, 8.0, 7.0])]
    assert verdict.trials_to_target(curves, 1.0) == (3.0, 2)
    assert math.isinf(verdict.trials_to_target(curves, 0.5)[0])
    lines = verdict.section(
        [("p", {"a": {0: 1.0, 1: 0.5}, "b": {0: 7.0, 1: 6.0}}, {"a": curves[:2], "b": curves[2:]})],
        "1 worker",
    )
    assert lines[0] == "## Verdict: 1 worker"
    assert any(line.startswith("| p | **a** | b |") for line in lines)


# ------------------------------------------------------------------------ Ray Tune
def test_tune_searchers_are_compared_on_a_users_trainable(tmp_path: Path) -> None:
    pytest.importorskip("ray.tune")
    from ray import tune

    from mixbo_compare.tune_compare import compare_tune

    def train(config: dict) -> dict:
        return {"acc": 1 - (config["x"] - 0.3) ** 2 - 0.1 * (config["c"] == "b")}

    space = {"x": tune.uniform(0, 1), "c": tune.choice(["a", "b"])}
    with pytest.raises(ValueError, match="unknown searcher"):
        compare_tune(train, space, metric="acc", searchers=("nope",))
    table = compare_tune(
        train,
        space,
        metric="acc",
        mode="max",
        searchers=("mixbo", "random"),
        num_samples=5,
        seeds=1,
        out=tmp_path,
    )
    assert [r["sampler"] for r in table] == ["MixboSearch", "BasicVariantGenerator"]
    for row in table:
        assert row["status"] == "ok" and row["completed"] == 5, row
        assert 0 < row["best_value"] <= 1  # the accuracy, in the metric's own direction
    assert "(train, higher is better)" in table.report and "## Verdict" in table.report
    assert (tmp_path / "convergence_trials_k1.png").exists()


def test_an_unchanged_objective_is_reused_and_a_changed_one_runs_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "obj.py"
    file.write_text("def f(trial):\n    return trial.suggest_float('x', 0, 1)\n")
    argv = ["--objective", f"{file}:f", "-s", "tpe", "--seeds", "1", "-n", "4"]
    argv += ["-o", str(tmp_path / "out"), "--jobs", "1", "--no-progress", "--quiet"]
    assert cli.main(argv) == 0
    capsys.readouterr()
    assert cli.main(argv) == 0
    assert "reusing 1 finished runs" in capsys.readouterr().out
    file.write_text("def f(trial):\n    return 1 + trial.suggest_float('x', 0, 1)\n")
    assert cli.main(argv) == 0
    assert "reusing" not in capsys.readouterr().out
    best = [float(r["best_true_value"]) for r in _rows(tmp_path / "out" / "trials.csv")]
    assert min(best) >= 1  # the edited objective ran
