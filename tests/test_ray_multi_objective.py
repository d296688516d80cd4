"""Several metrics in mixbo's Tune searchers (``metric=[...]``, ``mode=[...]``): ParEGO's
scalarisations, as under Optuna (tests/test_optuna_multi_objective.py)."""

from __future__ import annotations

import pickle
import time

import numpy as np
import pytest

pytest.importorskip("ray.tune")

from ray import tune  # noqa: E402
from ray.tune.schedulers import ASHAScheduler, FIFOScheduler  # noqa: E402

from ray_plugins import BOFMSearch, CasmopolitanSearch, CoCaBOSearch, MixboSearch  # noqa: E402

SEARCHERS = [CoCaBOSearch, CasmopolitanSearch, BOFMSearch, MixboSearch]
SPACE = {"x": tune.uniform(0, 1), "y": tune.uniform(0, 1), "c": tune.choice(["a", "b", "c"])}
PENALTY = {"a": 0.0, "b": 0.4, "c": 0.8}


def metrics(config: dict) -> dict[str, float]:
    """Three objectives, "cost" and "spread" minimised, "gain" maximised."""
    x, y, base = config["x"], config["y"], PENALTY[config["c"]]
    shared = base + 2 * (y - 0.5) ** 2
    return {
        "cost": x + shared,
        "gain": -((1 - x) ** 2 + shared),
        "spread": (x - 0.5) ** 2 + (y - 0.2) ** 2 + base,
    }


@pytest.fixture(params=SEARCHERS, ids=lambda c: c.__name__)
def searcher_cls(request):
    return request.param


def run(searcher, n: int) -> list[dict]:
    results = []
    for i in range(n):
        config = searcher.suggest(f"t{i}")
        result = metrics(config)
        searcher.on_trial_complete(f"t{i}", result)
        results.append(result)
    return results


def dominated_share(results: list[dict], names: list[str], modes: list[str]) -> float:
    """A Monte Carlo hypervolume over fixed random points (all objectives minimised)."""
    signs = np.array([1.0 if m == "min" else -1.0 for m in modes])
    y = np.array([[r[n] for n in names] for r in results]) * signs
    points = np.random.default_rng(0).uniform(-1.0, 2.5, size=(20_000, len(names)))
    return float((y[None] <= points[:, None]).all(-1).any(-1).mean())


@pytest.mark.parametrize(
    "names, modes",
    [(["cost", "gain"], ["min", "max"]), (["cost", "gain", "spread"], ["min", "max", "min"])],
)
def test_model_suggestions_beat_random_search(searcher_cls, names, modes) -> None:
    searcher = searcher_cls(SPACE, metric=names, mode=modes, seed=0, n_startup_trials=10)
    calls = []
    original = searcher._strategy.suggest

    def spy(space, history, n, rng):
        assert history.n_objectives == len(names)  # each objective, beside a scalarisation
        calls.append(len(history))
        return original(space, history, n, rng)

    searcher._strategy.suggest = spy
    results = run(searcher, 30)
    assert len(calls) == 20
    history = searcher.history()
    assert history.n_objectives == len(names)
    signs = np.array([1.0 if m == "min" else -1.0 for m in modes])
    expected = np.array([[r[n] for n in names] for r in results]) * signs
    assert np.allclose(history.objectives, expected)  # "gain" flipped
    randoms = [  # the same searcher, never leaving its random design
        dominated_share(
            run(searcher_cls(SPACE, metric=names, mode=modes, seed=s, n_startup_trials=99), 30),
            names,
            modes,
        )
        for s in range(3)
    ]
    assert dominated_share(results, names, modes) > max(randoms)


def test_same_seed_same_suggestions_and_pickled_copies_continue(searcher_cls) -> None:
    def make():
        return searcher_cls(SPACE, ["cost", "gain"], ["min", "max"], seed=2, n_startup_trials=3)

    a, b = make(), make()
    run(a, 5)
    run(b, 5)
    copy = pickle.loads(pickle.dumps(a))
    assert a.suggest("next") == b.suggest("next") == copy.suggest("next")


@pytest.mark.parametrize(
    "metric, mode, match",
    [
        (["cost", "gain"], ["min"], "same length"),
        (["cost"], ["min", "max"], "same length"),
        (["cost", "gain"], ["min", "best"], "'min' or 'max'"),
        (["cost", "gain"], "min", "both be lists"),
        ("cost", ["min", "max"], "both be lists"),
        (["cost", 3], ["min", "max"], "metric names"),
    ],
)
def test_metrics_and_modes_are_checked_at_construction(metric, mode, match) -> None:
    with pytest.raises(ValueError, match=match):
        CoCaBOSearch(SPACE, metric=metric, mode=mode)


def test_a_list_of_modes_needs_its_metrics() -> None:
    with pytest.raises(ValueError, match="metric must be the list"):
        CoCaBOSearch(SPACE, mode=["min", "max"]).suggest("t0")


def test_a_trial_missing_one_metric_counts_as_failed(ray_logs) -> None:
    searcher = CoCaBOSearch(SPACE, ["cost", "gain"], ["min", "max"], seed=0, n_startup_trials=2)
    for i in range(4):
        searcher.suggest(f"t{i}")
    searcher.on_trial_result("t0", {"cost": 1.0, "gain": 2.0, "training_iteration": 1})
    searcher.on_trial_complete("t0", {"cost": 1.0, "gain": 2.0})
    searcher.on_trial_complete("t1", {"cost": 1.0})
    searcher.on_trial_complete("t2", {"cost": 1.0, "gain": float("nan")})
    searcher.on_trial_complete("t3", {"cost": 0.5, "gain": 1.0})
    history = searcher.history()
    assert np.array_equal(history.objectives, [[1.0, -2.0], [0.5, -1.0]])
    assert [r.state for r in searcher._trials.values()] == [
        "complete",
        "failed",
        "failed",
        "complete",
    ]
    assert "no 'gain'" in " ".join(r.getMessage() for r in ray_logs.records)
    assert searcher.suggest("t4")  # the model runs on what is left


def test_evaluated_points_take_one_value_per_metric() -> None:
    points = [{"x": 0.2, "y": 0.5, "c": "a"}, {"x": 0.9, "y": 0.1, "c": "b"}]
    searcher = CoCaBOSearch(
        SPACE,
        ["cost", "gain"],
        ["min", "max"],
        points_to_evaluate=points,
        evaluated_rewards=[[0.2, -0.64], [1.3, 0.1]],
        seed=0,
    )
    assert np.array_equal(searcher.history().objectives, [[0.2, 0.64], [1.3, -0.1]])
    with pytest.raises(ValueError, match="2 metrics"):
        searcher.add_evaluated_point(points[0], [1.0])
    with pytest.raises(ValueError, match="list of 2 numbers"):
        searcher.add_evaluated_point(points[0], 1.0)


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for this module's real Tune runs (starting one takes seconds)."""
    ray = pytest.importorskip("ray")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            yield
        finally:
            ray.shutdown()


def tuner(searcher, scheduler, path, n: int) -> tune.Tuner:
    """A Tuner of ``n`` trials of a two-metric toy, two at a time."""

    def trainable(config):  # defined here: Tune's workers cannot import this test module
        penalty = {"a": 0.0, "b": 0.4, "c": 0.8}[config["c"]]
        return {"cost": config["x"] + penalty, "gain": config["y"] - penalty}

    return tune.Tuner(
        trainable,
        param_space=SPACE,
        tune_config=tune.TuneConfig(
            num_samples=n,
            search_alg=searcher,
            scheduler=scheduler,
            max_concurrent_trials=2,
            reuse_actors=True,
        ),
        run_config=tune.RunConfig(storage_path=str(path), name="mixbo_mo", verbose=0),
    )


def test_tuner_fit_with_several_metrics(local_ray, tmp_path) -> None:
    """A real Tune run: the metrics and modes on the searcher, FIFO scheduling."""
    start = time.perf_counter()
    searcher = MixboSearch(metric=["cost", "gain"], mode=["min", "max"], seed=0)
    searcher._engine.n_startup_trials = 3
    results = tuner(searcher, FIFOScheduler(), tmp_path, 8).fit()
    print(f"multi-objective Tuner.fit took {time.perf_counter() - start:.1f} s")
    assert len(results) == 8 and not results.errors
    history = searcher.history()
    assert len(history) == 8 and history.n_objectives == 2
    reported = sorted((r.metrics["cost"], -r.metrics["gain"]) for r in results)  # gain flipped
    assert sorted(map(tuple, history.objectives.tolist())) == reported


def test_several_metrics_under_a_scheduler_raise_before_any_trial(local_ray, tmp_path) -> None:
    """ASHA stops trials by one metric: the run fails at once, saying what to do instead."""
    searcher = MixboSearch(metric=["cost", "gain"], mode=["min", "max"], seed=0)
    scheduler = ASHAScheduler(metric="cost", mode="min", max_t=4, grace_period=1)
    with pytest.raises(ValueError, match="FIFO scheduling only") as raised:
        tuner(searcher, scheduler, tmp_path, 4).fit()
    assert "AsyncHyperBandScheduler" in str(raised.value)  # what ASHAScheduler is
    assert "Leave TuneConfig's scheduler out" in str(raised.value)
    assert searcher._trials == {}  # not one configuration was handed out
