"""The incumbent's polish: (1+1)-ES steps beside the trust region past 200 observations."""

from __future__ import annotations

import dataclasses

import numpy as np

from common.methods.casmopolitan import strategy as casmopolitan_strategy
from common.methods.casmopolitan.options import CasmopolitanOptions
from common.methods.casmopolitan.polish import (
    GAP_EARNED,
    GAP_MEASURED,
    LOG_FAILURE,
    LOG_SUCCESS,
    SIGMA_INIT,
    SIGMA_MIN,
    START,
    extend_polish,
    replay_polish,
)
from common.methods.casmopolitan.strategy import Casmopolitan
from common.methods.casmopolitan.trust_region import LOCAL_DATA, TrustRegionConfig, replay
from common.space.conditions import Condition
from common.space.history import History
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace


def _space() -> MixedSpace:
    return MixedSpace(
        [
            Categorical("c", ("a", "b", "c")),
            Integer("n", 1, 9),
            Float("x", -2.0, 2.0),
            Float("lr", 1e-4, 1.0, log=True),
            Float("s", 0.0, 1.0, step=0.25),
        ]
    )


def _objective(config) -> float:
    return (
        (config["c"] != "b")
        + abs(config["n"] - 4)
        + (config["x"] - 0.3) ** 2
        + (np.log10(config["lr"]) + 2) ** 2
        + config["s"]
    )


def _history(space, n, seed=0) -> History:
    """A random study whose first trial stays its best: the incumbent's discrete part settled."""
    configs = space.decode(space.sample(n, np.random.default_rng(seed)))
    values = [_objective(c) for c in configs]
    values[0] = min(values) - 1.0
    return History.from_lists(configs, values)


def _played(n: int, step_value, region_value) -> np.ndarray:
    """Values of a study whose trial ``i`` has ``step_value(i)`` where it is a polish step, else
    ``region_value(i)``."""
    values: list[float] = []
    for i in range(n):
        due = i > LOCAL_DATA and replay_polish(np.array(values)).due(i)
        values.append(step_value(i) if due else region_value(i))
    return np.array(values)


def test_steps_alternate_with_the_trust_region_while_they_gain_as_much() -> None:
    values = np.full(260, 1.0)  # nobody gains: the steps keep every other turn
    polish = replay_polish(values)
    assert not polish.steps[: LOCAL_DATA + 1].any()
    assert polish.steps[LOCAL_DATA + 1 :: 2].all() and not polish.steps[LOCAL_DATA + 2 :: 2].any()
    assert not replay_polish(values, enabled=False).steps.any()
    assert not polish.due(260) and polish.due(261)
    assert polish.turns(260, 4) == 2 and replay_polish(values[:150]).turns(150, 51) == 0


def test_a_trust_region_that_gains_more_keeps_seven_turns_in_eight() -> None:
    values = _played(400, lambda i: 1e6, lambda i: -float(i))  # steps fail, the region improves
    steps = np.flatnonzero(replay_polish(values).steps)
    assert steps[0] == LOCAL_DATA + 1 and set(np.diff(steps)) == {GAP_MEASURED}
    values = _played(400, lambda i: -float(i), lambda i: 1e6)  # the other way round
    steps = np.flatnonzero(replay_polish(values).steps)
    assert set(np.diff(steps)) == {GAP_EARNED}


def test_the_step_size_follows_the_one_fifth_success_rule() -> None:
    values = np.full(LOCAL_DATA + 11, 5.0)
    values[LOCAL_DATA + 1] = 4.0  # the first step succeeds, the next four fail
    polish = replay_polish(values)
    expected = np.exp(np.log(SIGMA_INIT) + LOG_SUCCESS + 4 * LOG_FAILURE)
    assert np.isclose(polish.sigma, expected) and not polish.resting
    assert np.isclose(polish.sigma, SIGMA_INIT)  # one success in five keeps the step size


def test_a_converged_strategy_rests_until_the_trust_region_moves_the_incumbent() -> None:
    n_fail = int(np.ceil(np.log(SIGMA_INIT / SIGMA_MIN) / -LOG_FAILURE))
    values = np.full(LOCAL_DATA + 1 + 2 * n_fail + 10, 1.0)
    polish = replay_polish(values)
    assert polish.resting and polish.steps.sum() == n_fail  # the later turns go back
    assert not polish.due(len(values)) and not polish.due(len(values) + 1)
    values[-3] = 0.5  # a trust-region trial finds a new best: the steps start again
    again = replay_polish(values)
    assert again.steps[-2] and not again.steps[-3] and not again.resting
    assert np.isclose(again.sigma, SIGMA_INIT * np.exp(LOG_FAILURE))


def test_no_steps_while_the_incumbents_discrete_part_moved_in_the_second_half() -> None:
    values = np.full(320, 1.0)
    values[150] = 0.5  # a new best at 150, half-way to position 300
    moved = np.zeros(320, int)
    moved[150] = 1  # in another discrete assignment: no step before position 300
    steps = np.flatnonzero(replay_polish(values, discrete=moved).steps)
    assert steps[0] == 300 and replay_polish(values[:300], discrete=moved[:300]).due(300)
    assert not replay_polish(values[:299], discrete=moved[:299]).due(299)
    same = np.zeros(320, int)  # the floats of the same assignment: steps from position 201
    assert np.flatnonzero(replay_polish(values, discrete=same).steps)[0] == LOCAL_DATA + 1


def test_the_strategy_labels_the_discrete_part_by_the_columns_a_step_keeps() -> None:
    space = _space()
    history = _history(space, LOCAL_DATA + 21)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=10, polish=True))
    assert strategy.polish(space, history).steps.sum() == 10
    configs, values = list(history.configs), list(history.values)
    values[150] = values[0] - 1.0  # a new best at 150 ...
    configs[150] = dict(configs[0], c="a" if configs[0]["c"] != "a" else "b")
    assert not strategy.polish(space, History.from_lists(configs, values)).steps.any()
    configs[150] = dict(configs[0], x=configs[0]["x"] / 2)  # ... or only its floats moved
    assert strategy.polish(space, History.from_lists(configs, values)).steps.sum() == 10


def test_the_labels_are_causal_so_workers_agree_on_a_grown_history() -> None:
    rng = np.random.default_rng(3)
    values = rng.standard_normal(400).cumsum()
    whole = replay_polish(values).steps
    for n in (201, 250, 333):
        assert np.array_equal(replay_polish(values[:n]).steps, whole[:n])


def test_a_step_moves_only_the_incumbents_active_float_columns() -> None:
    space = _space()
    history = _history(space, LOCAL_DATA + 1)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=10, polish=True))
    X = space.encode(history.configs)
    best = X[int(np.argmin(history.values))]
    for seed in range(3):
        row = space.encode(strategy.suggest(space, history, 1, np.random.default_rng(seed)))[0]
        moved = ~np.isclose(row, best, rtol=0, atol=1e-12)
        assert moved.tolist() == [False, False, True, True, False]  # x and lr only
        assert np.all(np.abs(row - best) < 10 * SIGMA_INIT)


def test_the_trust_region_passes_over_the_steps() -> None:
    space = _space()
    history = _history(space, LOCAL_DATA + 41)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=10, polish=True))
    steps = strategy.polish(space, history).steps
    assert steps.sum() == 20
    config = TrustRegionConfig.for_dims(1, 4, 10)
    assert strategy.trust_region_state(space, history) == replay(history.values, config, steps)
    state = strategy.trust_region_state(space, history)
    assert not steps[state.best_index] and state.n_seen == len(history)
    # a failing step is no failure of the trust region's
    worse = History.from_lists(history.configs + (history.configs[0],), [*history.values, 1e9])
    assert strategy.polish(space, worse).steps[-1]
    after = strategy.trust_region_state(space, worse)
    assert (after.n_failure, after.length) == (state.n_failure, state.length)


def test_no_polish_before_its_turn_or_without_the_option() -> None:
    space = _space()
    for n, option in ((LOCAL_DATA, True), (LOCAL_DATA + 1, False)):
        history = _history(space, n)
        on = Casmopolitan(CasmopolitanOptions(n_init=10, polish=option))
        off = Casmopolitan(CasmopolitanOptions(n_init=10))
        a = on.suggest(space, history, 1, np.random.default_rng(1))
        b = off.suggest(space, history, 1, np.random.default_rng(1))
        assert a == b


def test_inactive_and_absent_floats_are_not_polished() -> None:
    conditional = MixedSpace(
        [Categorical("kind", ("p", "q")), Float("x", 0.0, 1.0), Integer("n", 0, 5)],
        [Condition(("x",), "kind", (0,))],
    )
    configs = [{"kind": "q", "n": i % 6} for i in range(LOCAL_DATA + 1)]
    values = [float(c["n"]) for c in configs]
    history = History.from_lists(configs, values)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=10, polish=True))
    assert strategy.polish(conditional, history).steps.sum() == 0  # position 201 comes next
    # the incumbent's only float is inactive: the trust region's pick instead
    suggested = strategy.suggest(conditional, history, 1, np.random.default_rng(0))
    off = Casmopolitan(CasmopolitanOptions(n_init=10))
    assert suggested == off.suggest(conditional, history, 1, np.random.default_rng(0))
    # ... and the replay agrees: that trial was the trust region's, not a step it passes over
    grown = History.from_lists(history.configs + tuple(suggested), [*values, 9.0])
    assert not strategy.polish(conditional, grown).steps.any()
    config = TrustRegionConfig.for_dims(1, 2, 10)  # its failure counts as the region's
    region_only = np.zeros(len(grown), bool)
    assert strategy.trust_region_state(conditional, grown) == replay(
        grown.values, config, region_only
    )
    integers = MixedSpace([Categorical("c", ("a", "b")), Integer("n", 0, 5)])
    grid = History.from_lists([{"c": "a", "n": i % 6} for i in range(LOCAL_DATA + 1)], values)
    assert not Casmopolitan(CasmopolitanOptions(polish=True)).polish(integers, grid).steps.any()


def test_a_batch_and_a_parallel_study_count_positions_with_the_running_trials(
    monkeypatch,
) -> None:
    space = _space()
    history = _history(space, LOCAL_DATA + 1)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=10, polish=True))
    X = space.encode(history.configs)
    best = X[int(np.argmin(history.values))]
    rows = space.encode(strategy.suggest(space, history, 3, np.random.default_rng(0)))
    near = np.all(np.abs(rows - best) < 10 * SIGMA_INIT, axis=1)
    categories_kept = np.all(rows[:, :2] == best[:2], axis=1)
    assert (near & categories_kept)[:2].all()  # positions 201 and 203: steps, first
    calls = []
    monkeypatch.setattr(
        casmopolitan_strategy, "polish_step", lambda *args: calls.append(1) or best.copy()
    )
    grown = History.from_lists(history.configs + (history.configs[0],), [*history.values, 9.0])
    assert strategy.polish(space, grown).steps[-1]  # position 201 was a step
    strategy.suggest(space, grown, 1, np.random.default_rng(0))  # position 202: the region's
    assert not calls
    running = History(grown.configs, grown.values, pending=(grown.configs[0],))
    strategy.suggest(space, running, 1, np.random.default_rng(0))  # position 203: a step
    assert calls == [1]


def test_a_trace_continued_over_a_grown_history_equals_its_replay() -> None:
    rng = np.random.default_rng(5)
    values = rng.standard_normal(500) - np.linspace(0, 3, 500)
    labels = rng.integers(0, 2, 500)
    movable = rng.random(500) < 0.9
    trace, n = START, 0
    for end in (150, LOCAL_DATA + 1, 230, 231, 380, 500):
        trace = extend_polish(trace, values[:end], labels[n:end].tolist(), movable[n:end])
        whole = replay_polish(values[:end], True, labels[:end], movable[:end])
        assert np.array_equal(trace.polish.steps, whole.steps)
        assert dataclasses.replace(trace.polish, steps=whole.steps) == whole
        n = end
    assert trace.polish.steps.sum() > 10  # steps were taken on the way


def test_the_strategy_continues_its_polish_and_starts_afresh_on_another_history() -> None:
    space = _space()
    history = _history(space, LOCAL_DATA + 60)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=10, polish=True))
    for n in (LOCAL_DATA + 20, LOCAL_DATA + 21, LOCAL_DATA + 60):
        grown = history.subset(np.arange(n))
        fresh = Casmopolitan(CasmopolitanOptions(n_init=10, polish=True)).polish(space, grown)
        assert np.array_equal(strategy.polish(space, grown).steps, fresh.steps)
        assert strategy._polished[3].n == n  # the last replay, kept to continue from
    other = History.from_lists(history.configs, history.values[::-1].copy())
    fresh = Casmopolitan(CasmopolitanOptions(n_init=10, polish=True)).polish(space, other)
    assert np.array_equal(strategy.polish(space, other).steps, fresh.steps)
