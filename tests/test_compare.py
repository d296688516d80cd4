"""The comparison runner: simulated workers, regret maths, and ``mixbo-compare`` end to end."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import optuna
import pytest
from optuna.trial import TrialState

import mixbo_compare as compare
from common.space.mixed_space import Categorical, Float, MixedSpace
from mixbo_compare import cli, report
from mixbo_compare.problems import get_problem
from mixbo_compare.problems.problem import Problem
from mixbo_compare.simulated_workers import (
    HALF_NORMAL_SCALE,
    half_normal_runtimes,
    simulate,
)

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------- simulated workers
class _Recorder:
    """Fake ask/tell that checks the simulator against its own bookkeeping."""

    def __init__(self) -> None:
        self.running: set[int] = set()
        self.running_at_ask: list[int] = []
        self.told: list[int] = []

    def ask(self, i: int) -> int:
        self.running_at_ask.append(len(self.running))
        self.running.add(i)
        return i

    def tell(self, i: int) -> None:
        self.running.remove(i)
        self.told.append(i)


@pytest.mark.parametrize(("n_trials", "k"), [(30, 1), (30, 4), (25, 8), (3, 5), (0, 2)])
def test_simulator_schedule(n_trials: int, k: int) -> None:
    rec = _Recorder()
    events = simulate(rec.ask, rec.tell, n_trials, k, half_normal_runtimes(seed=3))
    times = [e.time for e in events]
    assert times == sorted(times)  # events in simulated-time order
    # every trial started once, finished once, and was told by the end
    assert sorted(e.trial for e in events if e.kind == "start") == list(range(n_trials))
    assert sorted(e.trial for e in events if e.kind == "finish") == list(range(n_trials))
    assert sorted(rec.told) == list(range(n_trials)) and not rec.running
    # exactly k trials run while the budget lasts: each ask after the first k sees k - 1 busy
    fill = min(k, n_trials)
    assert rec.running_at_ask == list(range(fill)) + [k - 1] * (n_trials - fill)
    for e in events:
        if e.kind == "start":
            assert e.running == min(k, e.trial + 1)
    # a finish is followed by the next start at the same time while trials remain
    for a, b in zip(events, events[1:], strict=False):
        if a.kind == "finish" and b.kind == "start":
            assert b.time == a.time
    # a trial finishes exactly its runtime after it starts
    durations = list(zip(range(n_trials), half_normal_runtimes(seed=3), strict=False))
    start = {e.trial: e.time for e in events if e.kind == "start"}
    end = {e.trial: e.time for e in events if e.kind == "finish"}
    for i, d in durations:
        assert end[i] - start[i] == pytest.approx(d)


def test_simulator_sequential_is_cumulative() -> None:
    rec = _Recorder()
    events = simulate(rec.ask, rec.tell, 5, 1, iter([1.0, 2.0, 0.5, 0.25, 3.0]))
    ends = [e.time for e in events if e.kind == "finish"]
    assert ends == [1.0, 3.0, 3.5, 3.75, 6.75]
    assert rec.told == [0, 1, 2, 3, 4]


def test_simulator_finish_order_follows_runtimes() -> None:
    rec = _Recorder()
    simulate(rec.ask, rec.tell, 4, 2, iter([5.0, 1.0, 1.0, 1.0]))
    # t=1: trial 1 ends, 2 starts; t=2: 2 ends, 3 starts; t=3: 3 ends; t=5: 0 ends
    assert rec.told == [1, 2, 3, 0]


def test_half_normal_runtimes() -> None:
    stream = half_normal_runtimes(seed=0)
    draws = np.array([next(stream) for _ in range(100_000)])
    assert (draws >= 0).all()
    assert draws.mean() == pytest.approx(1.0, abs=0.01)
    assert draws.std() == pytest.approx(HALF_NORMAL_SCALE * math.sqrt(1 - 2 / math.pi), abs=0.01)
    again = half_normal_runtimes(seed=0)
    assert [next(again) for _ in range(5)] == list(draws[:5])
    other = half_normal_runtimes(seed=1)
    assert [next(other) for _ in range(5)] != list(draws[:5])


def test_simulator_rejects_bad_input() -> None:
    rec = _Recorder()
    with pytest.raises(ValueError):
        simulate(rec.ask, rec.tell, 3, 0, iter([1.0] * 3))
    with pytest.raises(ValueError):
        simulate(rec.ask, rec.tell, 3, 1, iter([1.0, -1.0, 1.0]))


# ------------------------------------------------------------------------- compare.run
class _CountingSampler(optuna.samplers.RandomSampler):
    """Records how many trials are RUNNING (the new one included) when each trial starts."""

    def __init__(self, seed: int, log: list[int]) -> None:
        super().__init__(seed=seed)
        self.log = log

    def before_trial(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        self.log.append(len(study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))))
        super().before_trial(study, trial)


def test_run_keeps_k_trials_running() -> None:
    log: list[int] = []
    result = compare.run(
        get_problem("func2c"), lambda seed: _CountingSampler(seed, log), 0, 12, workers=3
    )
    assert log == [1, 2, 3] + [3] * 9
    assert sorted(result.finish_order) == list(range(12))
    finish = result.end_times[result.finish_order]
    assert (np.diff(finish) >= 0).all()
    assert (result.end_times > result.start_times).all()
    assert np.isfinite(result.values).all()
    assert result.seconds_per_suggestion >= 0 and len(result.suggest_seconds) == 12


def test_run_is_reproducible_and_sequential_by_default() -> None:
    a = compare.run(get_problem("func2c"), "random", 5, 8)
    b = compare.run(get_problem("func2c"), "random", 5, 8)
    np.testing.assert_array_equal(a.values, b.values)
    assert list(a.finish_order) == list(range(8))
    assert (a.start_times[1:] == a.end_times[:-1]).all()  # one worker: back to back


class _NoisyObjective:
    """Observed value = mean + seeded noise, with ``mean`` and ``reseed`` as tabular objectives."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reseed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def mean(self, config: dict[str, Any]) -> float:
        return float(config["x"] ** 2)

    def __call__(self, config: dict[str, Any]) -> float:
        if config["c"] == "bad":
            raise RuntimeError("this configuration crashes")
        return self.mean(config) + float(self.rng.normal())


def _toy_problem(declared: bool = True) -> Problem:
    space = MixedSpace([Float("x", -1.0, 1.0), Categorical("c", ("ok", "bad"))])
    objective = _NoisyObjective()
    if not declared:
        return Problem("toy", space, objective, 0.0)
    return Problem("toy", space, objective, 0.0, mean=objective.mean, seed_noise=objective.reseed)


def test_run_records_failures_and_noise_free_values() -> None:
    problem = _toy_problem()
    result = compare.run(problem, "random", 0, 20)
    bad = [p["c"] == "bad" for p in result.params]
    assert any(bad) and not all(bad)
    for is_bad, v, t, e, p in zip(
        bad, result.values, result.true_values, result.errors, result.params, strict=True
    ):
        if is_bad:
            assert math.isnan(v) and math.isnan(t) and "crashes" in e
        else:
            assert t == pytest.approx(p["x"] ** 2) and v != t and e is None
    again = compare.run(problem, "random", 0, 20)  # reseeded: the same noise again
    np.testing.assert_array_equal(result.values, again.values)


def test_run_uses_only_the_problems_declared_noise_interface() -> None:
    """An objective's own ``mean``/``reseed`` methods count only when the Problem declares them."""
    problem = _toy_problem(declared=False)
    result = compare.run(problem, "random", 0, 20)
    ok = ~np.isnan(result.values)
    np.testing.assert_array_equal(result.true_values[ok], result.values[ok])  # no mean: observed
    again = compare.run(problem, "random", 0, 20)  # not reseeded: the noise goes on
    assert not np.array_equal(result.values[ok], again.values[ok])


def test_skip_reason_cmaes_only_without_categoricals() -> None:
    assert compare.skip_reason("cmaes", get_problem("func2c").space)
    assert compare.skip_reason("cmaes", MixedSpace([Float("x", 0.0, 1.0)])) is None
    assert compare.skip_reason("random", get_problem("func2c").space) is None
    assert compare.is_ours("cocabo") and not compare.is_ours("tpe")


def test_every_mixbo_sampler_is_registered_as_ours() -> None:
    import optuna_plugins

    assert {cls.__name__ for cls in compare.MIXBO_SAMPLERS.values()} == set(optuna_plugins.__all__)
    for name, cls in compare.MIXBO_SAMPLERS.items():
        sampler = compare.SAMPLERS[name](3)
        assert type(sampler) is cls and compare.is_ours(name)
    assert not any(compare.is_ours(s) for s in cli.OPTUNA_SAMPLERS + ("tpe-cl",))


# ------------------------------------------------------------------------- regret maths
def test_best_so_far_and_regret() -> None:
    v = np.array([np.nan, 3.0, 5.0, np.nan, 1.0, 2.0])
    np.testing.assert_array_equal(report.best_so_far(v)[1:], [3.0, 3.0, 3.0, 1.0, 1.0])
    assert math.isnan(report.best_so_far(v)[0])
    np.testing.assert_allclose(report.regret_curve(v, 0.5)[1:], [2.5, 2.5, 2.5, 0.5, 0.5])
    # a value a hair below the optimum is regret 0, not negative
    assert report.regret_curve(np.array([0.9999999]), 1.0)[0] == 0.0


def test_reference() -> None:
    assert report.reference(1.0, 1.5) == (1.0, "optimum 1")
    assert report.reference(1.0, 1.0 - 1e-9)[0] == 1.0  # within tolerance
    ref, note = report.reference(1.0, 0.5)
    assert ref == 0.5 and "beat" in note
    ref, note = report.reference(None, 70.9)
    assert ref == 70.9 and "no known optimum" in note


def test_median_iqr_and_ranks() -> None:
    assert report.median_iqr([5.0, 1.0, 3.0, 2.0, 4.0, math.nan]) == (3.0, 2.0, 4.0)
    assert all(math.isnan(x) for x in report.median_iqr([math.nan]))
    finals = {
        "a": {0: 1.0, 1: 2.0, 2: 0.0},
        "b": {0: 2.0, 1: 2.0, 2: math.nan},  # seed 2 failed: no rank there
        "c": {0: 3.0, 1: 1.0},
    }
    r = report.ranks(finals)
    assert r == {"a": [1.0, 2.5, 1.0], "b": [2.0, 2.5], "c": [3.0, 1.0]}


def test_time_grid_and_log_scale() -> None:
    ends = np.array([0.5, 1.0, 2.0])
    regrets = np.array([3.0, 2.0, 1.0])
    grid = np.array([0.0, 0.5, 0.7, 1.0, 5.0])
    out = report.on_time_grid(ends, regrets, grid)
    assert math.isnan(out[0])
    np.testing.assert_array_equal(out[1:], [3.0, 3.0, 2.0, 1.0])
    assert report.use_log_scale([np.array([1e-4, 1.0])])
    assert not report.use_log_scale([np.array([0.0, 0.5, 2.0])])


def _fake_run(
    sampler: str, seed: int, values: list[float], optimum: float | None
) -> report.RunData:
    return report.RunData(
        problem="p",
        sampler=sampler,
        seed=seed,
        workers=1,
        status="ok",
        optimum=optimum,
        n_trials=len(values),
        seconds_per_suggestion=0.1,
        true_values=np.array(values),
        end_times=np.arange(1.0, len(values) + 1),
    )


def test_group_uses_best_seen_without_optimum() -> None:
    runs = [_fake_run("a", 0, [5.0, 3.0], None), _fake_run("b", 0, [4.0, 2.0], None)]
    (setting,) = report.group(runs)
    assert setting.reference == 2.0 and "no known optimum" in setting.note
    assert setting.finals() == {"a": {0: 1.0}, "b": {0: 0.0}}
    md = report.table(runs)
    assert "no known optimum" in md and "| b | **0 [0, 0]** |" in md


# ------------------------------------------------------------------------- end to end
def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _check_png(path: Path) -> None:
    from matplotlib.image import imread

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = imread(path)
    assert image.shape[0] > 300 and image.shape[1] > 400
    assert image[..., :3].std() > 0.01  # not a blank image


def _broken(seed: int) -> optuna.samplers.BaseSampler:
    raise RuntimeError("this sampler is broken")


def test_mixbo_compare_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(compare.SAMPLERS, "broken", _broken)
    out = tmp_path / "results"
    argv = [
        "-p",
        "func2c",
        "-s",
        "random",
        "tpe",
        "cmaes",
        "broken",
        "--seeds",
        "2",
        "-n",
        "6",
        "-k",
        "1",
        "2",
        "-o",
        str(out),
        "--jobs",
        "1",  # the injected "broken" sampler exists in this process only
        "--no-progress",
        "--quiet",
    ]
    assert cli.main(argv) == 0

    runs = _read(out / "runs.csv")
    assert list(runs[0]) == list(report.RUN_COLUMNS)
    assert len(runs) == 4 * 2 * 2  # samplers x seeds x workers
    status = {(r["sampler"], r["seed"], r["workers"]): r["status"] for r in runs}
    assert {s for (name, _, _), s in status.items() if name in ("random", "tpe")} == {"ok"}
    assert {s for (name, _, _), s in status.items() if name == "cmaes"} == {"skipped"}
    assert {s for (name, _, _), s in status.items() if name == "broken"} == {"failed"}

    trials = _read(out / "trials.csv")
    assert list(trials[0]) == list(report.TRIAL_COLUMNS)
    assert len(trials) == 2 * 2 * 2 * 6  # ok samplers x seeds x workers x trials
    for sampler, seed, workers in [
        (s, str(i), str(k)) for s in ("random", "tpe") for i in (0, 1) for k in (1, 2)
    ]:
        mine = [
            t for t in trials if (t["sampler"], t["seed"], t["workers"]) == (sampler, seed, workers)
        ]
        assert [int(t["trial"]) for t in mine] == list(range(6))
        assert sorted(int(t["finished"]) for t in mine) == list(range(1, 7))
        by_finish = sorted(mine, key=lambda t: int(t["finished"]))
        ends = [float(t["end_time"]) for t in by_finish]
        assert ends == sorted(ends)
        best = [float(t["best_true_value"]) for t in by_finish]
        assert best == list(np.minimum.accumulate([float(t["value"]) for t in by_finish]))
        assert set(json.loads(mine[0]["params"])) == {"h1", "h2", "x1", "x2"}
        if workers == "2":  # two trials start at time 0
            assert sum(float(t["start_time"]) == 0.0 for t in mine) == 2

    md = (out / "results.md").read_text()
    assert "## Summary: 1 worker, sequential" in md
    assert "## Summary: 2 simulated asynchronous workers" in md
    assert "mixbo-compare -p func2c" in md
    rows = md.splitlines()  # summary + problem, per k (the verdict's rows start with func2c)
    assert sum(r.startswith("| random |") for r in rows) == 4
    assert sum(r.startswith("| tpe |") for r in rows) == 4
    assert "skipped: no categorical support (CMA-ES)" in md
    assert "broken failed on seed 0: RuntimeError: this sampler is broken" in md
    assert "optimum -0.2063257" in md
    summary = md.split("## Summary: 1 worker, sequential")[1].split("## ")[0]
    row = next(line for line in summary.splitlines() if line.startswith("| random |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert len(cells) == 4  # sampler, func2c, mean rank, s/suggestion
    final = [
        float(t["best_true_value"]) + 0.2063257
        for t in trials
        if t["sampler"] == "random" and t["workers"] == "1" and t["finished"] == "6"
    ]
    assert cells[1].split(" [")[0].strip("*") == f"{np.median(final):.3g}"

    for name in (
        "convergence_trials_k1.png",
        "convergence_trials_k2.png",
        "convergence_time_k2.png",
    ):
        _check_png(out / name)
    assert not (out / "convergence_time_k1.png").exists()

    # the report can be rebuilt from the CSVs alone, identically
    (out / "results.md").unlink()
    assert cli.main(["--report-only", str(out)]) == 0
    assert f"Command: `mixbo-compare {' '.join(argv)}`" in md
    assert f"source hash `{cli.run_cache.code_version()}`" in md  # its runs' cache version
    assert "commit `" in md and "cores" in md  # the stamp: commit, versions, machine
    assert (out / "results.md").read_text() == md


def test_parallel_jobs_give_the_same_trials(tmp_path: Path) -> None:
    common = [
        "-p",
        "func2c",
        "-s",
        "random",
        "--seeds",
        "2",
        "-n",
        "4",
        "-k",
        "2",
        "--no-progress",
        "--quiet",
    ]
    assert cli.main([*common, "-j", "1", "-o", str(tmp_path / "one")]) == 0
    assert cli.main([*common, "-j", "2", "-o", str(tmp_path / "two")]) == 0
    one, two = _read(tmp_path / "one" / "trials.csv"), _read(tmp_path / "two" / "trials.csv")
    drop = ("suggest_seconds",)
    assert [{k: v for k, v in r.items() if k not in drop} for r in one] == [
        {k: v for k, v in r.items() if k not in drop} for r in two
    ]


def test_console_script_and_cli_errors(capsys: pytest.CaptureFixture[str]) -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["mixbo-compare"] == "mixbo_compare.cli:main"
    assert cli.main(["--list"]) == 0
    listed = capsys.readouterr().out
    assert "func2c" in listed and "cocabo (mixbo)" in listed and "NAME@N" in listed
    with pytest.raises(SystemExit):
        cli.main(["-s", "no-such-sampler"])
    with pytest.raises(SystemExit):
        cli.main(["-p", "no-such-problem"])
    assert "unknown problem 'no-such-problem'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["-p", "func2c@3"])
    assert "has no instances" in capsys.readouterr().err
    assert cli._expand_samplers(["ours", "random"])[-1] == "random"
    assert "cocabo" in cli._expand_samplers(["all"])


def test_the_default_run_compares_every_one_of_our_samplers_with_optunas() -> None:
    args = cli.parser().parse_args([])
    cli._fill_defaults(args)
    defaults = args.samplers
    assert set(cli._expand_samplers(["ours"])) <= set(defaults)
    assert {"tpe", "gp"} <= set(defaults)


def test_interrupted_comparison_keeps_finished_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = cli.execute
    calls = []

    def execute(task: cli.Task, on_trial: Any = None) -> cli.Outcome:
        calls.append(task)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(task, on_trial)

    monkeypatch.setattr(cli, "execute", execute)
    out = tmp_path / "partial"
    argv = ["-p", "func2c", "-s", "random", "tpe", "--seeds", "2", "-n", "3", "-o", str(out)]
    assert cli.main([*argv, "-j", "1", "--no-progress", "--quiet"]) == 130  # patched here only
    # seeds run in order, so the two finished runs are both samplers on seed 0
    runs = _read(out / "runs.csv")
    assert [(r["sampler"], r["seed"]) for r in runs] == [("random", "0"), ("tpe", "0")]
    assert len(_read(out / "trials.csv")) == 2 * 3
    assert "Interrupted: the table has the runs that ended." in (out / "results.md").read_text()


def test_an_interrupted_comparison_resumes_with_the_runs_it_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = cli.execute
    calls: list[tuple[str, int]] = []
    interrupt_at = [3]

    def execute(task: cli.Task, on_trial: Any = None) -> cli.Outcome:
        calls.append((task.sampler, task.seed))
        if len(calls) == interrupt_at[0]:
            raise KeyboardInterrupt
        return real(task, on_trial)

    monkeypatch.setattr(cli, "execute", execute)
    out = tmp_path / "resumed"
    flags = ["-p", "func2c", "-s", "random", "tpe", "--seeds", "2", "-n", "3"]
    flags += ["-j", "1", "--no-progress", "--quiet"]
    argv = [*flags, "-o", str(out)]
    assert cli.main(argv) == 130
    interrupt_at[0] = 0
    calls.clear()
    assert cli.main(argv) == 0
    assert calls == [("random", 1), ("tpe", 1)]  # seed 0's runs came from runs.jsonl
    rows = _read(out / "runs.csv")
    assert sorted((r["sampler"], r["seed"]) for r in rows) == [
        ("random", "0"),
        ("random", "1"),
        ("tpe", "0"),
        ("tpe", "1"),
    ]
    assert len(_read(out / "trials.csv")) == 4 * 3
    fresh = tmp_path / "fresh"
    assert cli.main([*flags, "-o", str(fresh)]) == 0

    def values(folder: Path) -> list[tuple[str, ...]]:
        return sorted(
            (r["sampler"], r["seed"], r["trial"], r["value"], r["params"])
            for r in _read(folder / "trials.csv")
        )

    assert values(fresh) == values(out)  # the same trials, resumed or not

    calls.clear()  # baselines of another version run again (mixbo's: tests/test_multi_objective)
    monkeypatch.setattr(cli.run_cache, "baseline_version", lambda sampler: "other")
    assert cli.main(argv) == 0
    assert len(calls) == 4


def test_a_folder_stored_without_runs_jsonl_is_reused_from_its_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's folder keeps only ``runs.csv``, ``trials.csv`` and ``provenance.json``: the same
    command into it runs nothing again and rewrites the same tables; after a change to mixbo's
    source, only mixbo's rows run again."""
    flags = ["-p", "func2c", "-s", "mixbo", "random", "--seeds", "2", "-n", "3"]
    flags += ["-j", "1", "--no-progress", "--quiet"]
    out = tmp_path / "stored"
    assert cli.main([*flags, "-o", str(out)]) == 0
    (out / cli.RUNS_JSONL).unlink()  # what a clone of the repository holds
    tables = {name: (out / name).read_text() for name in ("runs.csv", "trials.csv")}

    real = cli.execute
    calls: list[tuple[str, int]] = []

    def execute(task: cli.Task, on_trial: Any = None) -> cli.Outcome:
        calls.append((task.sampler, task.seed))
        return real(task, on_trial)

    monkeypatch.setattr(cli, "execute", execute)
    stamp = json.loads((out / "provenance.json").read_text())
    stamp.update(cpu="the machine that ran them", jobs=7, date="2026-01-02")
    (out / "provenance.json").write_text(json.dumps(stamp))
    assert cli.main([*flags, "-o", str(out)]) == 0
    assert calls == []
    assert {name: (out / name).read_text() for name in tables} == tables
    assert len((out / cli.RUNS_JSONL).read_text().splitlines()) == 4  # the cache is back
    kept = json.loads((out / "provenance.json").read_text())  # it ran nothing: the stamp stays
    assert (kept["cpu"], kept["jobs"], kept["date"]) == (
        "the machine that ran them",
        7,
        "2026-01-02",
    )

    (out / cli.RUNS_JSONL).unlink()
    monkeypatch.setattr(cli.run_cache, "code_version", lambda: "changed mixbo")
    assert cli.main([*flags, "-o", str(out)]) == 0
    assert sorted(calls) == [("mixbo", 0), ("mixbo", 1)]
    # random's runs were reused: the stamp says where they ran, beside where mixbo's just did
    stamp = json.loads((out / "provenance.json").read_text())
    assert stamp["cpu"] != "the machine that ran them"
    assert [(o["cpu"], o["date"]) for o in stamp["reused"]] == [
        ("the machine that ran them", "2026-01-02")
    ]
    assert "run on: the machine that ran them on 2026-01-02" in (out / "results.md").read_text()


def test_runs_in_this_process_get_one_thread_as_in_a_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With one job the runs execute in the command's own process, on one torch thread as the
    worker processes' (the stamp says so), and the caller's thread count is restored."""
    import torch

    previous = torch.get_num_threads()
    seen: list[int] = []
    real = cli.execute

    def execute(task: cli.Task, on_trial: Any = None) -> cli.Outcome:
        seen.append(torch.get_num_threads())
        return real(task, on_trial)

    monkeypatch.setattr(cli, "execute", execute)
    flags = ["-p", "func2c", "-s", "random", "--seeds", "2", "-n", "3", "-j", "1"]
    torch.set_num_threads(2)
    try:
        assert cli.main([*flags, "--no-progress", "--quiet", "-o", str(tmp_path)]) == 0
        assert seen == [1, 1]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(previous)


def test_a_stale_runs_jsonl_does_not_hide_the_tables_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder whose ``runs.jsonl`` holds records of earlier versions only (a local cache older
    than the stored tables' provenance) still reuses the tables' runs: the missing records are
    added, the stale ones kept, nothing is run again."""
    flags = ["-p", "func2c", "-s", "mixbo", "random", "--seeds", "2", "-n", "3"]
    flags += ["-j", "1", "--no-progress", "--quiet", "-o", str(tmp_path)]
    assert cli.main(flags) == 0
    jsonl = tmp_path / cli.RUNS_JSONL
    stale = [{**json.loads(line), "code": "old"} for line in jsonl.read_text().splitlines()]
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in stale))
    calls: list[str] = []
    real = cli.execute

    def execute(task: cli.Task, on_trial: Any = None) -> cli.Outcome:
        calls.append(task.sampler)
        return real(task, on_trial)

    monkeypatch.setattr(cli, "execute", execute)
    assert cli.restore_runs(tmp_path) == 4
    assert cli.restore_runs(tmp_path) == 0  # each run is added once
    assert cli.main(flags) == 0
    assert calls == []
    assert len(jsonl.read_text().splitlines()) == 8


def test_mixbo_version_follows_the_samplers_and_problems_not_the_reporting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mixbo_compare import run_cache

    before = run_cache.code_version()
    read = Path.read_bytes

    def edited(names: tuple[str, ...]):
        return lambda path: read(path) + (b"# edited" if path.name in names else b"")

    monkeypatch.setattr(Path, "read_bytes", edited(("report.py", "pages.py", "cli.py")))
    assert run_cache.code_version() == before
    monkeypatch.setattr(Path, "read_bytes", edited(("trust_region.py",)))
    assert run_cache.code_version() != before
    monkeypatch.setattr(Path, "read_bytes", edited(("study_loop.py",)))
    assert run_cache.code_version() != before


def test_a_peer_changes_its_own_version_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Upgrading a peer's package (SMAC3) or editing its adapter reruns that peer's rows only:
    mixbo's, Optuna's samplers' and the other peers' stored runs stay valid."""
    import importlib.metadata

    from mixbo_compare import run_cache

    samplers = ["mixbo", "tpe", "gp", "smac", "catcmawm", "ax"]
    before = run_cache.run_versions(samplers)
    assert before["tpe"] == before["gp"] != before["mixbo"]
    assert len({before[s] for s in ("tpe", "smac", "catcmawm", "ax")}) == 4
    installed = importlib.metadata.version

    def upgraded(name: str) -> str:
        return "99.0" if name == "smac" else installed(name)

    def changed() -> set[str]:
        after = run_cache.run_versions(samplers)
        return {s for s in samplers if after[s] != before[s]}

    monkeypatch.setattr(importlib.metadata, "version", upgraded)
    assert changed() == {"smac"}
    monkeypatch.setattr(importlib.metadata, "version", installed)
    read = Path.read_bytes

    def edited(name: str):
        return lambda path: read(path) + (b"# edited" if path.name == name else b"")

    monkeypatch.setattr(Path, "read_bytes", edited("smac3.py"))
    assert changed() == {"smac"}
    monkeypatch.setattr(Path, "read_bytes", edited("_sampler.py"))  # the peers' shared sampler
    assert changed() == {"smac", "catcmawm", "ax"}
    monkeypatch.setattr(Path, "read_bytes", edited("study_loop.py"))
    assert changed() == set(samplers)


def test_a_problem_changes_only_its_own_runs_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding or editing one problem keeps every other problem's stored runs (a suite's baselines
    are computed once); a problem's version follows the problem modules its module imports."""
    from mixbo_compare import run_cache

    names = ["pest@3", "func2c~1", "mo-hpolib-slice", "lc-powerlaw+median", "my_objective"]
    run_cache.problem_version.cache_clear()
    before = {p: run_cache.task_version("v", p) for p in names}
    assert len(set(before.values())) == len(names)
    assert run_cache.problem_version("my_objective") == ""  # not a registered problem
    read = Path.read_bytes

    def changed(file: str) -> set[str]:
        def edited(path: Path) -> bytes:
            return read(path) + (b"# edited" if path.name == file else b"")

        monkeypatch.setattr(Path, "read_bytes", edited)
        run_cache.problem_version.cache_clear()
        after = {p: run_cache.task_version("v", p) for p in names}
        monkeypatch.setattr(Path, "read_bytes", read)
        run_cache.problem_version.cache_clear()
        return {p for p in names if after[p] != before[p]}

    assert changed("pest.py") == {"pest@3"}
    assert changed("hpobench.py") == {"mo-hpolib-slice"}  # imported by hpobench_mo.py
    assert changed("learning_curves.py") == {"lc-powerlaw+median"}
    assert changed("maxsat_new_family.py") == set()


def test_the_versions_cover_every_module_a_run_uses() -> None:
    """A stored run is reused while its sampler's version is unchanged: each module of
    ``mixbo_compare`` that the study loops use must be among the sources every version hashes,
    or (the peers) among those every peer's version hashes."""
    import inspect

    from mixbo_compare import multi_objective, run_cache, runner, study_loop

    covered = (*run_cache._RUN_SOURCES, *run_cache._PEER_SOURCES)
    root = Path(run_cache.__file__).resolve().parents[1]
    for loop in (runner, multi_objective, study_loop):
        for value in vars(loop).values():
            module = inspect.getmodule(value)
            if module is None or not module.__name__.startswith("mixbo_compare."):
                continue
            path = Path(inspect.getfile(module)).resolve().relative_to(root).as_posix()
            assert any(path == c or path.startswith(c + "/") for c in covered), (
                f"{path} is not among the sources run_cache hashes"
            )


# ------------------------------------------------------------------------- the compare extra
_SAMPLERS_ALONE = """
import sys

import optuna  # Optuna imports tqdm itself (its own dependency): unload it, then block both

for name in [m for m in sys.modules if m.split(".")[0] == "tqdm"]:
    del sys.modules[name]
assert "matplotlib" not in sys.modules, "Optuna imported matplotlib"
sys.modules["tqdm"] = sys.modules["matplotlib"] = None  # any later import of them raises

import optuna_plugins

optuna.logging.set_verbosity(optuna.logging.ERROR)
cs = ("a", "bb")
for name in optuna_plugins.__all__:
    sampler = getattr(optuna_plugins, name)(seed=0, n_startup_trials=2)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + len(t.suggest_categorical("c", cs)), 4)
loaded = sorted(m for m in sys.modules if m.startswith("mixbo_compare"))
assert not loaded, loaded
"""


def test_the_samplers_need_neither_matplotlib_nor_tqdm() -> None:
    """``pip install mixbo`` (no ``compare`` extra) must be enough to import and run a sampler."""
    done = subprocess.run(
        [sys.executable, "-c", _SAMPLERS_ALONE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_mixbo_compare_without_its_extra_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if matplotlib were not installed
    out = tmp_path / "results"
    argv = ["-p", "func2c", "-s", "random", "--seeds", "1", "-n", "2", "-o", str(out)]
    assert cli.main([*argv, "--no-progress", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "matplotlib" in err and "tqdm" not in err and "pip install 'mixbo[compare]'" in err
    assert not out.exists()  # it stopped before running anything
    assert cli.main(["--list"]) == 0  # listing needs neither


def test_plotting_libraries_are_only_in_the_compare_extra() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [req.split(">")[0].split("[")[0] for req in project["dependencies"]]
    assert "matplotlib" not in names and "tqdm" not in names
    extra = [req.split(">")[0] for req in project["optional-dependencies"]["compare"]]
    assert {"matplotlib", "tqdm"} <= set(extra)


def test_quiet_mode_silences_the_peers_warnings_and_verbose_keeps_them(caplog) -> None:
    import logging
    import warnings

    ax_logger = logging.getLogger("ax.generation_strategy.generation_node")
    level = logging.getLogger("ax").level
    try:
        with warnings.catch_warnings():
            cli._quiet(verbose=False)
            with caplog.at_level(logging.WARNING):
                ax_logger.warning("gen failed, switching to fallback model")
            with warnings.catch_warnings(record=True) as seen:
                warnings.warn("DataFrame is highly fragmented.", Warning, stacklevel=1)
        assert "fallback" not in caplog.text
        assert not seen
        logging.getLogger("ax").setLevel(logging.NOTSET)
        with caplog.at_level(logging.WARNING):
            ax_logger.warning("gen failed, switching to fallback model")
        assert "fallback" in caplog.text
    finally:
        logging.getLogger("ax").setLevel(level)
        logging.disable(logging.NOTSET)


def test_a_skip_reason_is_listed_once_for_all_the_problems_it_skipped() -> None:
    ok = {"status": "ok", "optimum": 0.0, "n_trials": 2, "seconds_per_suggestion": 0.1}
    runs = []
    for problem in ("p1", "p2"):
        runs.append(report.RunData(problem, "tpe", 0, 1, true_values=np.array([2.0, 1.0]), **ok))
        runs.append(report.RunData(problem, "hebo", 0, 1, "skipped", "hebo: cannot install"))
    skipped = next(line for line in report.table(runs).splitlines() if line.startswith("Skipped"))
    assert skipped == "Skipped: hebo on p1, p2 (hebo: cannot install)."


def test_merged_runs_rebuild_one_report_and_refuse_a_run_counted_twice(tmp_path: Path) -> None:
    """``benchmarks/merge_runs.py``: two runs' CSVs, one filtered, make one ``--report-only``
    table; the same run in two sources is an error, not a doubled seed."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from merge_runs import merge
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    args = ["-p", "func2c", "--seeds", "2", "-n", "4", "--jobs", "1", "--no-progress", "-q"]
    assert cli.main([*args, "-s", "random", "tpe", "-o", str(ours)]) == 0
    assert cli.main([*args, "-s", "random", "--first-seed", "2", "-o", str(theirs)]) == 0
    merged = tmp_path / "merged"
    counts = merge(merged, [ours, theirs], ['sampler == "tpe" or seed == 0', ""])
    assert counts == {"runs.csv": 5, "trials.csv": 20}  # tpe 0-1, random 0, random 2-3
    with open(merged / "runs.csv", newline="") as f:
        runs = {(row["sampler"], int(row["seed"])) for row in csv.DictReader(f)}
    assert runs == {("tpe", 0), ("tpe", 1), ("random", 0), ("random", 2), ("random", 3)}
    assert cli.main(["--report-only", str(merged)]) == 0
    assert "random" in (merged / "results.md").read_text()
    with pytest.raises(SystemExit, match="in both"):
        merge(tmp_path / "twice", [ours, ours], ["", ""])


def _plateau_script():
    """``benchmarks/ackley5c_plateau.py`` as a module (benchmarks are scripts, not a package)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import ackley5c_plateau
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return ackley5c_plateau


def test_ackley5c_plateau_counts_float_only_trials_and_single_category_tries() -> None:
    """``benchmarks/ackley5c_plateau.py``: a run reaches one wrong category at its second trial,
    then keeps the incumbent's categories once, tries two single-category changes (of a right
    variable twice, with another float; of the wrong one once) and a two-category change, and
    fixes the wrong one last."""
    plateau_path = _plateau_script().plateau_path

    def trial(h: list[int], x: float, value: float) -> dict[str, str]:
        params = {f"h{i + 1}": v for i, v in enumerate(h)} | {"x1": x}
        return {"params": json.dumps(params), "value": str(value)}

    run = [
        trial([8, 8, 8, 2, 3], 0.5, 3.0),  # two wrong
        trial([8, 8, 8, 8, 3], 0.5, 1.0),  # the plateau: one wrong, the incumbent from here
        trial([8, 8, 8, 8, 3], 0.1, 0.9),  # float only (the new incumbent)
        trial([8, 8, 5, 8, 3], 0.1, 2.0),  # a single-category try
        trial([8, 8, 5, 8, 3], 0.2, 2.1),  # the same try again
        trial([8, 8, 8, 0, 0], 0.1, 2.5),  # two categories changed: neither kind
        trial([8, 8, 8, 8, 9], 0.1, 1.2),  # another single-category try
        trial([8, 8, 8, 8, 8], 0.1, 0.1),  # fixed
        trial([8, 8, 8, 8, 8], 0.0, 0.0),
    ]
    assert plateau_path(run) == {
        "start": 1,
        "fixed": 7,
        "float_only": 1,
        "tries": 2,
        "wrong_variable": 1,
        "right_variable": 2,
    }
    assert plateau_path(run[:1]) is None
    assert plateau_path(run[:7])["fixed"] is None


def test_ackley5c_plateau_ranks_the_fix_and_the_best_change_of_the_wrong_variable() -> None:
    """The fix (index 3) scores below two neighbours; the best change of the wrong variable
    (indices 2-4) is index 2, below one; a tie ranks best."""
    neighbour_ranks = _plateau_script().neighbour_ranks

    scores = np.array([-1.0, -5.0, -2.0, -3.0, -9.0])
    wrong_moves = np.array([False, False, True, True, True])
    assert neighbour_ranks(scores, 3, wrong_moves) == (3, 2)
    assert neighbour_ranks(scores, 0, ~wrong_moves) == (1, 1)
    assert neighbour_ranks(np.array([-2.0, -2.0, -4.0]), 1, np.array([False, True, True])) == (1, 1)


def test_a_worker_process_runs_every_sampler_on_one_torch_and_one_blas_thread(
    fresh_process_with_two_blas_threads,
) -> None:
    """Two workers on 2 cores, each with OpenBLAS's thread per core, took the default comparison
    66 s instead of 30: the worker set-up limits the libraries already loaded and those to come."""
    code = (
        "import json, numpy, torch\n"
        "from threadpoolctl import threadpool_info\n"
        "def blas(): return sorted({i['num_threads'] for i in threadpool_info()"
        " if i['user_api'] == 'blas'})\n"
        "before = blas()\n"
        "from mixbo_compare import cli\n"
        "cli._init_worker(None, False)\n"
        "print(json.dumps([before, blas(), torch.get_num_threads()]))\n"
    )
    before, after, torch_threads = fresh_process_with_two_blas_threads(code)
    assert before == [2]
    assert after == [1]
    assert torch_threads == 1
