"""Busy trials across threads and processes: PLAyBOOK through Optuna's storage."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import time

import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

import optuna_plugins._base as optuna_base
from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler
from optuna_plugins._base import _pending_params

SAMPLERS = {"cocabo": CoCaBOSampler, "casmopolitan": CasmopolitanSampler, "bofm": BOFMSampler}
ALL_SAMPLERS = {**SAMPLERS, "mixbo": MixboSampler}


def mixed(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -2, 2)
    n = trial.suggest_int("n", 0, 8)
    c = trial.suggest_categorical("c", ["a", "b", "c"])
    return (x - 0.5) ** 2 + abs(n - 3) / 4 + (c != "b")


@pytest.mark.parametrize("name", SAMPLERS)
def test_a_sampled_but_unreported_trial_is_a_busy_point_for_the_next(name) -> None:
    study = optuna.create_study(sampler=SAMPLERS[name](seed=0, n_startup_trials=4))
    study.optimize(mixed, n_trials=6)
    first = study.ask()
    mixed(first)  # samples, but is never told: it stays RUNNING
    frozen = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))[0]
    space = {k: v for k, v in study.trials[0].distributions.items()}
    assert _pending_params(frozen, space) == first.params
    seen = []
    strategy = study.sampler._strategy
    original = strategy.suggest

    def spy(space, history, n, rng):
        seen.append(history.pending)
        return original(space, history, n, rng)

    strategy.suggest = spy
    second = study.ask()
    mixed(second)
    assert seen and list(seen[-1]) == [first.params]


def test_running_trials_count_towards_the_initial_design() -> None:
    sampler = CoCaBOSampler(seed=0, n_startup_trials=4)
    study = optuna.create_study(sampler=sampler)
    study.optimize(mixed, n_trials=1)
    asked = []
    original = sampler._strategy.suggest
    sampler._strategy.suggest = lambda *a: asked.append(1) or original(*a)
    modelled = []
    for _ in range(4):  # 1 completed + 0, 1, 2, 3 running when each is asked
        trial = study.ask()
        mixed(trial)  # draws its parameters, stays RUNNING
        modelled.append(len(asked))
    assert modelled == [0, 0, 0, 1]  # the design (random, relative) ends at 4 issued trials


def test_relative_params_stored_before_any_suggest_call_are_read_back() -> None:
    study = optuna.create_study(sampler=CoCaBOSampler(seed=0, n_startup_trials=3))
    study.optimize(mixed, n_trials=4)
    space = dict(study.trials[0].distributions)
    trial = study.ask()
    assert trial.relative_params  # relative sampling happens, no suggest_* call yet
    frozen = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))[0]
    assert frozen.params == {}
    params = _pending_params(frozen, space)
    assert params is not None and set(params) == {"x", "n", "c"}
    assert isinstance(params["n"], int) and params["c"] in ("a", "b", "c")


def test_stale_running_trials_do_not_block() -> None:
    study = optuna.create_study(sampler=CoCaBOSampler(seed=0, n_startup_trials=3))
    study.optimize(mixed, n_trials=4)
    for _ in range(3):  # crashed workers: sampled, never reported
        mixed(study.ask())
    study.optimize(mixed, n_trials=4)
    assert sum(t.state == TrialState.COMPLETE for t in study.trials) == 8


def _storage(kind: str, path: str) -> optuna.storages.BaseStorage:
    if kind == "journal":
        return JournalStorage(JournalFileBackend(path))
    # a generous lock timeout: four processes write to one SQLite file on a loaded 2-core machine
    return optuna.storages.RDBStorage(
        f"sqlite:///{path}", engine_kwargs={"connect_args": {"timeout": 120}}
    )


def _worker(kind: str, path: str, name: str, seed: int, n_trials: int) -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sampler = ALL_SAMPLERS[name](seed=seed, n_startup_trials=5)
    study = optuna.load_study(study_name="shared", storage=_storage(kind, path), sampler=sampler)
    study.optimize(mixed, n_trials=n_trials)


@pytest.mark.parametrize(
    "name, kind", [*((name, "journal") for name in SAMPLERS), ("mixbo", "sqlite")]
)
def test_four_processes_share_one_storage_without_duplicates(tmp_path, name, kind) -> None:
    path = str(tmp_path / f"study.{kind}")
    storage = _storage(kind, path)
    optuna.create_study(study_name="shared", storage=storage)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(kind, path, name, seed, 10)) for seed in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
        assert p.exitcode == 0, f"a worker exited with {p.exitcode}"
    trials = optuna.load_study(study_name="shared", storage=storage).trials
    assert len(trials) == 40
    assert all(t.state == TrialState.COMPLETE for t in trials)
    configs = [tuple(sorted(t.params.items())) for t in trials]
    duplicates = {c for c in configs if configs.count(c) > 1}
    assert not duplicates, f"duplicated configurations: {duplicates}"


def mixed_two(trial: optuna.Trial) -> tuple[float, float]:
    """:func:`mixed` against a second, maximised objective."""
    x = trial.suggest_float("x", -2, 2)
    n = trial.suggest_int("n", 0, 8)
    c = trial.suggest_categorical("c", ["a", "b", "c"])
    return (x - 0.5) ** 2 + abs(n - 3) / 4 + (c != "b"), -((x + 0.5) ** 2) - (c == "c")


def _multi_objective_worker(path: str, seed: int, n_trials: int) -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sampler = MixboSampler(seed=seed, n_startup_trials=5)
    storage = _storage("journal", path)
    study = optuna.load_study(study_name="shared", storage=storage, sampler=sampler)
    study.optimize(mixed_two, n_trials=n_trials)


def test_processes_share_one_multi_objective_study_without_duplicates(tmp_path) -> None:
    path = str(tmp_path / "study.journal")
    storage = _storage("journal", path)
    optuna.create_study(study_name="shared", storage=storage, directions=["minimize", "maximize"])
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_multi_objective_worker, args=(path, s, 8)) for s in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=600)
        assert p.exitcode == 0, f"a worker exited with {p.exitcode}"
    study = optuna.load_study(study_name="shared", storage=storage)
    assert len(study.trials) == 24
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    configs = [tuple(sorted(t.params.items())) for t in study.trials]
    duplicates = {c for c in configs if configs.count(c) > 1}
    assert not duplicates, f"duplicated configurations: {duplicates}"
    assert study.best_trials


def _crashing_worker(path: str) -> None:
    """A worker that dies inside its trial, its parameters drawn, its heartbeat started."""
    storage = optuna.storages.RDBStorage(f"sqlite:///{path}", heartbeat_interval=1, grace_period=2)
    study = optuna.load_study(study_name="beats", storage=storage)

    def dies(trial: optuna.Trial) -> float:
        mixed(trial)
        os._exit(3)

    study.optimize(dies, n_trials=1)


@pytest.mark.parametrize("heartbeat", [True, False])
def test_a_dead_workers_trial_stops_being_busy_once_its_heartbeat_is_stale(
    tmp_path, heartbeat
) -> None:
    path = str(tmp_path / "beats.sqlite")
    beats = dict(heartbeat_interval=1, grace_period=2) if heartbeat else {}
    storage = optuna.storages.RDBStorage(f"sqlite:///{path}", **beats)
    sampler = MixboSampler(seed=0, n_startup_trials=3)
    study = optuna.create_study(study_name="beats", storage=storage, sampler=sampler)
    study.optimize(mixed, n_trials=3)
    if heartbeat:
        proc = multiprocessing.get_context("spawn").Process(target=_crashing_worker, args=(path,))
        proc.start()
        proc.join(timeout=300)
        assert proc.exitcode == 3
        time.sleep(3)  # past the grace period: the dead trial's heartbeat is stale
    else:  # without heartbeats a crashed worker's trial cannot be told from a slow one
        mixed(study.ask())
    seen: list[int] = []
    inner = sampler._strategy.suggest
    sampler._strategy.suggest = lambda space, history, n, rng: (
        seen.append(len(history.pending)) or inner(space, history, n, rng)
    )
    study.optimize(mixed, n_trials=1)
    states = [t.state for t in study.trials]
    if heartbeat:
        assert states.count(TrialState.FAIL) == 1 and seen == [0]  # failed, no longer busy
    else:
        assert states.count(TrialState.RUNNING) == 1 and seen == [1]  # still a busy point


def _lost_race(monkeypatch) -> tuple[optuna.Study, optuna.trial.Trial, list[int]]:
    """A study with one RUNNING trial, and a sampler whose model always picks that trial's
    configuration and whose read of the storage misses the trial (a worker that sampled at the
    same moment). Returns the study, the running trial and the pending counts the model saw."""
    sampler = CoCaBOSampler(seed=0, n_startup_trials=4)
    study = optuna.create_study(sampler=sampler)
    study.optimize(mixed, n_trials=6)
    first = study.ask()
    mixed(first)  # stays RUNNING with its parameters stored
    real = optuna_base._observations
    calls: list[int] = []

    def blind(study, others, search_space, *known):
        return dataclasses.replace(real(study, others, search_space, *known), pending=())

    def model(space, history, n, rng):
        calls.append(len(history.pending))
        return [dict(first.params)] * n

    monkeypatch.setattr(optuna_base, "_observations", blind)
    sampler._strategy.suggest = model
    return study, first, calls


def test_a_worker_that_finds_its_configuration_taken_samples_again(
    optuna_logs, monkeypatch
) -> None:
    # Two workers sampling at the same moment do not see each other's trial as busy; the one that
    # finds its configuration stored by another trial afterwards picks again, avoiding it.
    study, first, calls = _lost_race(monkeypatch)
    second = study.ask()
    mixed(second)
    assert calls == [0, 1]  # sampled twice: the claim seen after storing is a busy point
    assert second.params != first.params
    space = dict(study.trials[0].distributions)
    frozen = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))[-1]
    assert _pending_params(frozen, space) == second.params  # the claim is the new pick
    assert not optuna_logs.records  # a race resolved is nothing to warn about


def test_a_search_space_with_every_configuration_taken_still_gets_a_full_suggestion(
    optuna_logs,
) -> None:
    # 2 × 2 configurations and more running trials than that: a repeat cannot be avoided, and
    # the sampler says so instead of leaving the trial half sampled.
    def tiny(trial: optuna.Trial) -> float:
        trial.suggest_categorical("a", ["p", "q"])
        trial.suggest_categorical("b", [0, 1])
        return 0.0

    # one start-up trial, so every later one is sampled by the model, not by RandomSampler
    sampler = CoCaBOSampler(seed=0, n_startup_trials=1)
    study = optuna.create_study(sampler=sampler)
    study.enqueue_trial({"a": "p", "b": 0})
    study.optimize(tiny, n_trials=1)
    running = []
    caplog = optuna_logs
    for _ in range(4):
        trial = study.ask()
        tiny(trial)
        running.append(trial)
    configs = [(t.params["a"], t.params["b"]) for t in running]
    assert len(set(configs[:3])) == 3  # the three free configurations first
    assert ("p", 0) not in configs[:3]
    assert set(running[-1].relative_params) == {"a", "b"}
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "every configuration of the search space" in said[0]
