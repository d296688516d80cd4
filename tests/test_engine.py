"""The suggestion engine both adapters share: history, start-up rule, seeds, repeats, fallbacks."""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from common.batch.busy import BusyPolicy
from common.engine import Observations, SuggestionEngine, check_seed
from common.log import Reporter, reporting_to, warn
from common.methods.options import MethodOptions
from common.methods.strategy import Strategy
from common.space.configset import ConfigSet
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace

SPACE = MixedSpace(
    [Categorical("a", ["x", "y", "z"]), Categorical("b", [0, 1]), Categorical("c", [True, False])]
)  # 12 configurations


class Scripted(Strategy):
    """A strategy that returns what it is told, or raises it."""

    def __init__(self, answer: Any) -> None:
        super().__init__()
        self.answer = answer
        self.calls = 0

    def suggest(self, space, history, n, rng):
        self.calls += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return [dict(self.answer)] * n


@dataclass(frozen=True)
class ScriptedOptions(MethodOptions):
    answer: Any = None

    def make(self, busy: BusyPolicy) -> Strategy:
        return Scripted(self.answer)


@pytest.fixture
def records(caplog):
    caplog.set_level(logging.DEBUG, logger="test.engine")
    return caplog


def engine(answer: Any = None, **kwargs) -> SuggestionEngine:
    options = dict(name="Test", logger=logging.getLogger("test.engine"), seed=0)
    return SuggestionEngine(ScriptedOptions(answer), **{**options, **kwargs})


def warnings_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# ------------------------------------------------------------------------------- observations
def test_history_drops_missing_and_nan_flips_maximisation_and_clips_infinities(records) -> None:
    eng = engine()
    configs = [{"a": "x"}, {"a": "y"}, {"a": "z"}, {"a": "x"}, {"a": "y"}]
    values = [1.0, None, float("nan"), float("inf"), 3.0]
    history = eng.history(Observations(configs, values, [{"a": "z"}], maximize=True))
    assert history.configs == ({"a": "x"}, {"a": "x"}, {"a": "y"})
    assert history.values.tolist() == [-1.0, -3.0, -3.0]  # flipped; +inf is best, clipped
    assert history.pending == ({"a": "z"},)
    for _ in range(3):  # every later suggestion sees the value again: one warning all the same
        eng.history(Observations(configs, values))
    assert len([m for m in warnings_of(records) if "infinite" in m]) == 1


def test_the_start_up_rule_counts_issued_trials_and_needs_one_observation() -> None:
    eng = engine(n_startup_trials=4)
    assert not eng.design_done(n_observed=0, n_issued=10)
    assert not eng.design_done(n_observed=1, n_issued=3)
    assert eng.design_done(n_observed=1, n_issued=4)
    assert engine(n_startup_trials=0).design_done(n_observed=1, n_issued=0)


def test_the_design_is_random_and_never_repeats_and_the_model_runs_after_it() -> None:
    eng = engine({"a": "x", "b": 0, "c": True}, n_startup_trials=5)
    configs: list[dict] = []
    for i in range(5):
        s = eng.suggest(
            SPACE, Observations(configs, [0.0] * len(configs)), trial_index=i, n_issued=i
        )
        assert s.source == "design"
        configs.append(s.config)
    assert len({tuple(c.values()) for c in configs}) == 5
    assert eng.strategy.calls == 0
    s = eng.suggest(SPACE, Observations(configs, [0.0] * 5), trial_index=5, n_issued=5)
    assert eng.strategy.calls == 1 and s.source in ("model", "random")


# ------------------------------------------------------------------------------------- seeds
def test_the_call_generator_is_a_function_of_seed_trial_and_attempt() -> None:
    a, b = engine(seed=3), engine(seed=3)
    assert a.rng(7).random() == b.rng(7).random()
    assert a.rng(7).random() != a.rng(8).random()
    assert a.rng(7).random() != a.rng(7, attempt=1).random()
    assert a.rng(7).random() != engine(seed=4).rng(7).random()
    copied = pickle.loads(pickle.dumps(a))
    assert copied.rng(7).random() == a.rng(7).random()
    a.reseed()
    assert a.rng(7).random() != b.rng(7).random()


@pytest.mark.parametrize("seed", ["abc", -1, 1.5, True])
def test_a_bad_seed_says_what_a_seed_must_be(seed) -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative integer or None"):
        check_seed(seed)


@pytest.mark.parametrize("n", [-1, 2.5, "3"])
def test_a_bad_start_up_count_is_refused(n) -> None:
    with pytest.raises(ValueError, match="n_startup_trials must be an integer >= 0"):
        engine(n_startup_trials=n)


# ----------------------------------------------------------------------------------- repeats
def test_a_repeated_suggestion_is_replaced_by_a_free_configuration(records) -> None:
    seen = {"a": "x", "b": 0, "c": True}
    eng = engine(seen, n_startup_trials=0)
    # a pruned trial without a reported value is left out of the model but is taken all the same
    observed = Observations(
        [seen, {"a": "z", "b": 0, "c": 1}],
        [1.0, None],
        [{"a": "y", "b": 0, "c": True}],
        curves=[{}, {}],
        pruned=[False, True],
    )
    assert len(eng.history(observed)) == 1
    s = eng.suggest(SPACE, observed, trial_index=2, n_issued=2)
    assert s.source == "random"
    taken = ConfigSet(SPACE)
    taken.add_configs([seen, {"a": "y", "b": 0, "c": True}, {"a": "z", "b": 0, "c": True}])
    assert s.config not in taken
    assert not warnings_of(records)


def test_the_last_free_configuration_is_found_and_an_exhausted_space_is_said_once(
    records,
) -> None:
    every = SPACE.decode(SPACE.all_rows(100))
    eng = engine(every[0], n_startup_trials=0)
    left = Observations(every[:-1], np.arange(11.0))  # one configuration left
    s = eng.suggest(SPACE, left, trial_index=11, n_issued=11)
    assert s.config == every[-1]
    full = Observations(every, np.arange(12.0))
    for i in range(3):
        assert eng.suggest(SPACE, full, trial_index=12 + i, n_issued=12 + i).config in every
    said = warnings_of(records)
    assert len(said) == 1 and "every configuration of the search space" in said[0]


def test_a_space_with_a_free_float_is_never_called_exhausted(records) -> None:
    space = MixedSpace([Float("x", 0.0, 1.0), Categorical("c", ["a", "b"])])
    eng = engine(n_startup_trials=0)

    class Everything(ConfigSet):  # every random draw collides (as a near-certain-never event)
        def contains(self, rows):
            return np.ones(len(rows), dtype=bool)

    config = eng.random_free(space, Everything(space), np.random.default_rng(0))
    assert 0.0 <= config["x"] <= 1.0
    said = warnings_of(records)
    assert len(said) == 1 and "every configuration" not in said[0] and "may repeat" in said[0]


def test_one_free_configuration_among_many_is_found_by_enumeration() -> None:
    space = MixedSpace([Integer("i", 0, 999)])
    every = space.decode(space.all_rows(10_000))
    free = every.pop(637)
    eng = engine(every[0], n_startup_trials=0)
    s = eng.suggest(space, Observations(every, np.zeros(999)), trial_index=0, n_issued=999)
    assert s.config == free


# ---------------------------------------------------------------------------------- fallback
def test_a_failing_strategy_falls_back_to_a_free_random_configuration_warning_once(
    records,
) -> None:
    eng = engine(FloatingPointError("not positive definite"), n_startup_trials=0)
    seen = Observations([{"a": "x", "b": 0, "c": True}], [1.0])
    picks = [eng.suggest(SPACE, seen, trial_index=i, n_issued=1) for i in range(3)]
    assert {s.source for s in picks} == {"fallback"}
    assert all(s.config != seen.configs[0] for s in picks)
    said = warnings_of(records)
    assert len(said) == 1 and "failed to suggest (FloatingPointError" in said[0]


def test_a_malformed_suggestion_is_a_failure_not_a_crash(records) -> None:
    eng = engine({"a": "w", "b": 0, "c": True}, n_startup_trials=0)
    s = eng.suggest(
        SPACE, Observations([{"a": "x", "b": 0, "c": True}], [1.0]), trial_index=1, n_issued=1
    )
    assert s.source == "fallback" and s.config["a"] in ("x", "y", "z")


def test_a_slow_suggestion_warns_once(records) -> None:
    eng = engine({"a": "y", "b": 1, "c": False}, n_startup_trials=0, slow_suggestion_s=0.0)
    seen = Observations([{"a": "x", "b": 0, "c": True}], [1.0])
    for i in range(3):
        eng.suggest(SPACE, seen, trial_index=i, n_issued=1)
    said = warnings_of(records)
    assert len(said) == 1 and "for one suggestion" in said[0]


# ---------------------------------------------------------------------------------- logging
def test_core_warnings_go_to_the_adapters_logger_once_per_cause(caplog) -> None:
    caplog.set_level(logging.DEBUG)
    reporter = Reporter(logging.getLogger("test.adapter"))
    with reporting_to(reporter):
        warn("fit failed", cause="fit")
        warn("fit failed again", cause="fit")
    warn("outside any adapter")
    by_logger = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert by_logger == [
        ("test.adapter", logging.WARNING, "fit failed"),
        ("test.adapter", logging.DEBUG, "fit failed again"),
        ("mixbo", logging.WARNING, "outside any adapter"),
    ]


def test_the_strategy_runs_on_one_thread_reporting_to_the_engine(records) -> None:
    import torch

    class Probe(Strategy):
        def suggest(self, space, history, n, rng):
            warn("from inside the strategy")
            return [{"a": "y", "b": 1, "c": False, "threads": torch.get_num_threads()}] * n

    eng = engine(n_startup_trials=0)
    eng._strategy = Probe()
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        s = eng.suggest(
            SPACE, Observations([{"a": "x", "b": 0, "c": True}], [1.0]), trial_index=1, n_issued=1
        )
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert s.config["threads"] == 1
    assert [r.name for r in records.records] == ["test.engine"]


def test_the_strategy_runs_on_one_blas_thread_and_the_callers_limit_returns() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    class Probe(Strategy):
        def suggest(self, space, history, n, rng):
            return [{"a": "y", "b": 1, "c": False, "threads": blas_threads()}] * n

    eng = engine(n_startup_trials=0)
    eng._strategy = Probe()
    seen = Observations([{"a": "x", "b": 0, "c": True}], [1.0])
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() and set(blas_threads()) == {2}
        s = eng.suggest(SPACE, seen, trial_index=1, n_issued=1)
        assert set(blas_threads()) == {2}
    assert set(s.config["threads"]) == {1}


def test_scipys_blas_is_limited_even_when_the_first_suggestion_loads_it(
    fresh_process_with_two_blas_threads,
) -> None:
    """A new process has loaded numpy's BLAS but not scipy's when its first model suggestion
    starts; the methods' fits and optimisers run on scipy's."""
    code = (
        "import json\n"
        "from threadpoolctl import threadpool_info\n"
        "from common.runtime import single_thread\n"
        "with single_thread():\n"
        "    import scipy.linalg\n"
        "    seen = {i['filepath']: i['num_threads'] for i in threadpool_info()"
        " if i['user_api'] == 'blas'}\n"
        "print(json.dumps(seen))\n"
    )
    seen = fresh_process_with_two_blas_threads(code)
    assert any("scipy" in path for path in seen)
    assert set(seen.values()) == {1}


def test_the_strategy_runs_on_the_cpu_under_another_default_device() -> None:
    import torch

    class Probe(Strategy):
        def suggest(self, space, history, n, rng):
            return [{"a": "y", "b": 1, "c": False, "device": torch.empty(1).device.type}] * n

    eng = engine(n_startup_trials=0)
    eng._strategy = Probe()
    seen = Observations([{"a": "x", "b": 0, "c": True}], [1.0])
    with torch.device("meta"):  # stands in for a user's CUDA default device
        s = eng.suggest(SPACE, seen, trial_index=1, n_issued=1)
        assert torch.empty(1).device.type == "meta"
    assert s.config["device"] == "cpu"
    assert eng.suggest(SPACE, seen, trial_index=2, n_issued=1).config["device"] == "cpu"
