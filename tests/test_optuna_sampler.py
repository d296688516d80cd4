"""Optuna conventions of mixbo's samplers beyond Optuna's own conformance suite."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
import subprocess
import sys
import textwrap

import optuna
import pytest
import torch
from optuna.trial import TrialState

from optuna_plugins import BOFMSampler, CasmopolitanSampler, CoCaBOSampler, MixboSampler, _base

SAMPLERS = {
    "cocabo": CoCaBOSampler,
    "casmopolitan": CasmopolitanSampler,
    "bofm": BOFMSampler,
    "mixbo": MixboSampler,
}


def objective(trial: optuna.Trial) -> float:
    x = trial.suggest_float("x", -3, 3)
    lr = trial.suggest_float("lr", 1e-4, 1, log=True)
    n = trial.suggest_int("n", 1, 9, step=2)
    c = trial.suggest_categorical("c", ["a", "b", None])
    d = trial.suggest_categorical("d", [1, 2.5, True])
    return x**2 + abs(lr - 0.1) + n / 10 + (c != "b") + (d is True)


def params_of(sampler_cls, seed: int, n_trials: int = 12) -> list[dict]:
    study = optuna.create_study(sampler=sampler_cls(seed=seed, n_startup_trials=4))
    study.optimize(objective, n_trials=n_trials)
    return [t.params for t in study.trials]


def test_same_seed_same_suggestions(sampler_cls) -> None:
    a, b = params_of(sampler_cls, 7), params_of(sampler_cls, 7)
    assert a == b
    assert a != params_of(sampler_cls, 8)


def _spawned_params(name: str, seed: int, queue) -> None:
    queue.put(params_of(SAMPLERS[name], seed, n_trials=8))


def test_same_seed_same_suggestions_in_a_spawned_process(sampler_cls) -> None:
    name = next(k for k, v in SAMPLERS.items() if v is sampler_cls)
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_spawned_params, args=(name, 3, queue))
    proc.start()
    other = queue.get(timeout=240)
    proc.join(timeout=60)
    assert other == params_of(sampler_cls, 3, n_trials=8)


def test_global_rngs_are_untouched(sampler_cls) -> None:
    import random

    import numpy as np

    states = (random.getstate(), np.random.get_state()[1].copy(), torch.random.get_rng_state())
    params_of(sampler_cls, 0, n_trials=7)
    assert random.getstate() == states[0]
    assert (np.random.get_state()[1] == states[1]).all()
    assert torch.equal(torch.random.get_rng_state(), states[2])


def test_pickled_and_deep_copied_samplers_continue_identically(sampler_cls) -> None:
    study = optuna.create_study(sampler=sampler_cls(seed=1, n_startup_trials=4))
    study.optimize(objective, n_trials=6)
    copies = [pickle.loads(pickle.dumps(study.sampler)), copy.deepcopy(study.sampler)]
    nexts = []
    for sampler in [study.sampler, *copies]:
        clone = optuna.create_study(sampler=sampler)
        for t in study.trials:
            clone.add_trial(t)
        clone.optimize(objective, n_trials=1)
        nexts.append(clone.trials[-1].params)
    assert nexts[0] == nexts[1] == nexts[2]


def test_torch_threads_are_one_inside_and_restored_after(sampler_cls, monkeypatch) -> None:
    from common.methods.strategy import Strategy

    seen: list[int] = []
    cls = sampler_cls(seed=0)._strategy.__class__
    original = cls.suggest

    def spy(self, *args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(self, *args, **kwargs)

    assert issubclass(cls, Strategy)
    monkeypatch.setattr(cls, "suggest", spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        params_of(sampler_cls, 0, n_trials=6)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert seen and set(seen) == {1}


def test_shared_between_threads(sampler_cls) -> None:
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=3))
    study.optimize(objective, n_trials=14, n_jobs=2)
    assert len(study.trials) == 14
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


def test_maximisation_is_flipped(sampler_cls) -> None:
    study = optuna.create_study(
        sampler=sampler_cls(seed=0, n_startup_trials=5), direction="maximize"
    )
    study.optimize(lambda t: -((t.suggest_float("x", 0, 1) - 0.8) ** 2), n_trials=20)
    assert abs(study.best_params["x"] - 0.8) < 0.1


def test_failed_nan_and_infinite_trials(sampler_cls, optuna_logs) -> None:
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=3))
    outcomes = iter([1.0, float("nan"), 2.0, float("inf"), 3.0, -float("inf"), 0.5] + [1.0] * 5)

    def obj(trial: optuna.Trial) -> float:
        trial.suggest_float("x", 0, 1)
        trial.suggest_categorical("c", ["u", "v"])
        value = next(outcomes)
        if value == 3.0:
            raise RuntimeError("worker crashed")
        return value

    study.optimize(obj, n_trials=12, catch=(RuntimeError,))
    states = [t.state for t in study.trials]
    assert states.count(TrialState.FAIL) == 2  # NaN and the exception
    assert len(study.trials) == 12
    infinite = [r for r in optuna_logs.records if "infinite" in r.getMessage()]
    assert len(infinite) == 1  # said once, though every later suggestion sees the values


def test_multi_objective_studies_are_sampled(sampler_cls) -> None:
    """Once refused; now ParEGO's scalarisations (tests/test_optuna_multi_objective.py)."""
    study = optuna.create_study(
        directions=["minimize", "minimize"], sampler=sampler_cls(seed=0, n_startup_trials=2)
    )
    study.optimize(lambda t: (t.suggest_float("x", 0, 1), 1 - t.suggest_float("y", 0, 1)), 4)
    assert all(t.state == TrialState.COMPLETE for t in study.trials) and study.best_trials


def test_conditional_parameters_are_modelled_not_sampled_independently(
    sampler_cls, optuna_logs
) -> None:
    sampler = sampler_cls(seed=0, n_startup_trials=2)
    independent: list[str] = []
    original = sampler._independent_sampler.sample_independent

    def counting(study, trial, name, dist):
        independent.append(name)
        return original(study, trial, name, dist)

    sampler._independent_sampler.sample_independent = counting
    study = optuna.create_study(sampler=sampler)

    def obj(trial: optuna.Trial) -> float:
        kind = trial.suggest_categorical("kind", ["a", "b"])
        x = trial.suggest_float(f"x_{kind}", 0, 1)
        return x + trial.suggest_float("shared", 0, 1)

    study.optimize(obj, n_trials=10)
    # only a parameter's first appearance cannot be modelled
    assert sorted(independent) == sorted(set(independent))
    assert set(independent) <= {"kind", "x_a", "x_b", "shared"}
    assert "sampled independently" not in optuna_logs.text
    branches = {t.params["kind"] for t in study.trials}
    assert branches == {"a", "b"}
    for t in study.trials:  # each trial holds exactly its branch's parameters
        assert set(t.params) == {"kind", f"x_{t.params['kind']}", "shared"}


def test_a_parameter_whose_range_changes_is_sampled_independently_only_when_it_must(
    sampler_cls, optuna_logs
) -> None:
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=2))
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=4)
    # a widened range: the model's value (from [0, 1]) fits, then the model covers [0, 2]
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 2), n_trials=2)
    assert "sampled independently" not in optuna_logs.text
    # a disjoint range: the model's value cannot be used in #6, which says so once
    study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 5, 6), n_trials=3)
    assert optuna_logs.text.count("sampled independently") == 1
    assert "`y` in trial#6 is sampled independently" in optuna_logs.text
    assert "`x`" not in optuna_logs.text
    quiet = optuna.create_study(
        sampler=sampler_cls(seed=0, n_startup_trials=2, warn_independent_sampling=False)
    )
    optuna_logs.clear()
    quiet.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=4)
    quiet.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 5, 6), n_trials=2)
    assert "sampled independently" not in optuna_logs.text


def test_the_independent_sampling_warning_counts_running_trials_as_the_design_does(
    sampler_cls, optuna_logs
) -> None:
    study = optuna.create_study(sampler=sampler_cls(seed=0, n_startup_trials=3))
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)
    study.ask().suggest_float("x", 0, 1)  # running: with the completed one, two are issued
    optuna_logs.clear()
    study.ask().suggest_float("x", 5, 6)  # a changed distribution, still in the design
    assert "sampled independently" not in optuna_logs.text
    study.ask().suggest_float("x", 7, 8)  # three issued: past the design
    assert "`x` in trial#3 is sampled independently" in optuna_logs.text


def test_a_failing_strategy_falls_back_with_a_warning(sampler_cls, optuna_logs) -> None:
    sampler = sampler_cls(seed=0, n_startup_trials=2)

    class Broken:
        def suggest(self, *args, **kwargs):
            raise FloatingPointError("not positive definite")

    sampler._engine._strategy = Broken()
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=5)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    failures = [r for r in optuna_logs.records if "failed to suggest" in r.getMessage()]
    assert len(failures) == 1  # three failed suggestions, one cause, one warning
    assert len({tuple(sorted(t.params.items(), key=str)) for t in study.trials}) == 5


class CountingEngine:
    """The sampler's engine, recording each attribute the sampler reads from it."""

    def __init__(self, engine) -> None:
        self.engine, self.reads = engine, []

    def __getattr__(self, name: str):
        self.reads.append(name)
        return getattr(self.engine, name)


def test_each_suggestion_is_one_call_into_the_engine(sampler_cls) -> None:
    sampler = sampler_cls(seed=0, n_startup_trials=3)
    counting = sampler._engine = CountingEngine(sampler._engine)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=6)
    # the first trial has no relative search space yet: its parameters are sampled independently
    assert counting.reads == ["suggest"] * 5
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


def test_reseed_rng_changes_suggestions_and_reseeds_the_independent_sampler(sampler_cls) -> None:
    calls = []

    class Recording(optuna.samplers.RandomSampler):
        def reseed_rng(self) -> None:
            calls.append(1)
            super().reseed_rng()

    sampler = sampler_cls(seed=0, independent_sampler=Recording(seed=0))
    before = sampler._engine.rng(5).random()
    sampler.reseed_rng()
    assert calls == [1]
    assert sampler._engine.rng(5).random() != before


def test_unsupported_distribution_is_explained() -> None:
    from optuna_plugins._space import to_parameter

    class Odd(optuna.distributions.BaseDistribution):
        def to_external_repr(self, v):
            return v

        def to_internal_repr(self, v):
            return v

        def single(self):
            return False

        def _contains(self, v):
            return True

    with pytest.raises(ValueError, match="FloatDistribution, IntDistribution"):
        to_parameter("p", Odd())


def test_a_shadowing_common_module_gives_a_clear_error(tmp_path) -> None:
    (tmp_path / "common.py").write_text("x = 1\n")
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        try:
            import optuna_plugins
        except ImportError as err:
            print("IMPORT-ERROR:", err)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "IMPORT-ERROR" in out.stdout and "shadows" not in out.stderr
    assert "mixbo's `common` package" in out.stdout


def test_each_finished_trial_is_read_once_and_read_anew_in_a_new_space(monkeypatch) -> None:
    reads: list[int] = []
    of = _base.Finished.of
    read = lambda t, space: reads.append(t.number) or of(t, space)  # noqa: E731
    monkeypatch.setattr(_base.Finished, "of", read)
    study = optuna.create_study(sampler=CoCaBOSampler(seed=0, n_startup_trials=3))
    study.optimize(objective, n_trials=8)
    assert reads == list(range(7))  # from the first model ask on, each trial read once
    sampler = study.sampler
    trials = study.get_trials(deepcopy=False)
    space = sampler.infer_relative_search_space(study, trials[-1])
    cached = _base._observations(study, trials, space, sampler._finished)
    assert cached == _base._observations(study, trials, space)  # as read afresh
    reads.clear()
    narrower = {**space, "x": optuna.distributions.FloatDistribution(-1, 1)}
    outside = [t.number for t in trials if not -1 <= t.params["x"] <= 1]
    seen = _base._observations(study, trials, narrower, sampler._finished)
    assert len(reads) == len(trials) and len(seen.configs) == len(trials) - len(outside)


def test_the_union_search_space_continues_from_the_last_call() -> None:
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    union = _base.UnionSearchSpace()

    def check() -> None:
        trials = study.get_trials(deepcopy=False, states=_base._STATES)
        assert union.of(trials) == _base.union_search_space(trials)

    for n in range(6):
        running = study.ask()
        running.suggest_float("x", -1, 1 + (n >= 3))  # the range changes at the fourth trial
        if n % 2:
            running.suggest_int("k", 0, n)  # a conditional parameter
        check()  # with a running trial last
        study.tell(running, float(n))
        check()
    early = study.ask()
    early.suggest_float("x", -1, 5)
    late = study.ask()
    late.suggest_float("x", -1, 3)
    study.tell(late, 0.0)
    check()  # a running trial before a finished one
    study.tell(early, 0.0)
    check()
