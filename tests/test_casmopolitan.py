"""The CASMOPOLITAN strategy and ``CasmopolitanSampler``."""

from __future__ import annotations

import dataclasses
import logging
import pickle

import numpy as np
import optuna
import pytest

from common.methods.casmopolitan.options import CasmopolitanOptions
from common.methods.casmopolitan.strategy import Casmopolitan
from common.methods.casmopolitan.trust_region import region_of
from common.space.configset import ConfigSet
from common.space.history import History
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace
from optuna_plugins import CasmopolitanSampler


def _cat_space(n: int = 12, k: int = 3) -> MixedSpace:
    return MixedSpace([Categorical(f"h{i}", tuple(range(k))) for i in range(n)])


def _target(i: int, k: int = 3) -> int:
    return (i * 7) % k


def _cat_objective(config) -> float:
    return float(sum(config[f"h{i}"] != _target(i) for i in range(len(config))))


def _mixed_space() -> MixedSpace:
    return MixedSpace(
        [Categorical(f"c{i}", ("a", "b", "c")) for i in range(6)]
        + [Float("x", -2.0, 2.0), Integer("n", 1, 32, log=True), Float("s", 0.0, 1.0, step=0.25)]
    )


def _mixed_objective(config) -> float:
    mismatches = sum(config[f"c{i}"] != "b" for i in range(6))
    return mismatches + (config["x"] - 0.7) ** 2 + abs(np.log2(config["n"]) - 3) + config["s"]


def _history(space, objective, n, seed, pending=()):
    configs = space.decode(space.sample(n, np.random.default_rng(seed)))
    return History.from_lists(configs, [objective(c) for c in configs], pending)


def test_suggestions_are_valid_new_and_inside_the_trust_region() -> None:
    space = _cat_space()
    history = _history(space, _cat_objective, 25, 0)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=10))
    state = strategy.trust_region_state(space, history)
    X = space.encode(history.configs)
    region = region_of(state, X[state.best_index], space.cat_dims, space.cont_dims)
    configs = strategy.suggest(space, history, 3, np.random.default_rng(0))
    rows = space.encode(configs)
    assert len(configs) == 3
    assert region.contains(rows).all()
    assert not ConfigSet(space, X).contains(rows).any()
    assert len({tuple(r) for r in rows}) == 3  # distinct within the batch


def test_pending_configs_are_not_suggested_again() -> None:
    space = _cat_space(4, 2)  # 16 configs
    configs = space.decode(space.sample(12, np.random.default_rng(1)))
    unique = list({tuple(c.values()): c for c in configs}.values())
    history = History.from_lists(unique[:-2], [_cat_objective(c) for c in unique[:-2]], unique[-2:])
    picks = Casmopolitan(CasmopolitanOptions(n_init=2)).suggest(
        space, history, 2, np.random.default_rng(0)
    )
    taken = {tuple(c.values()) for c in unique}
    assert all(tuple(p.values()) not in taken for p in picks)


def test_mixed_space_suggestions_respect_bounds_and_grids() -> None:
    space = _mixed_space()
    history = _history(space, _mixed_objective, 20, 2)
    configs = Casmopolitan(CasmopolitanOptions(n_init=10)).suggest(
        space, history, 2, np.random.default_rng(0)
    )
    for c in configs:
        assert -2.0 <= c["x"] <= 2.0 and isinstance(c["x"], float)
        assert 1 <= c["n"] <= 32 and isinstance(c["n"], int)
        assert c["s"] in (0.0, 0.25, 0.5, 0.75, 1.0)
        assert all(c[f"c{i}"] in ("a", "b", "c") for i in range(6))


def test_a_restart_proposes_a_new_centre_away_from_the_old_bests() -> None:
    space = _cat_space(8, 2)
    history = _history(space, _cat_objective, 20, 3)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=3, failure_tolerance=1))
    values = np.full(len(history), 5.0)
    values[1] = 1.0  # one early best, then nothing but failures
    history = History.from_lists(history.configs, values)
    state = strategy.trust_region_state(space, history)
    assert state.restart >= 1
    # a history ending right at a restart: the next suggestion is the new centre
    cut = next(
        k
        for k in range(1, len(values) + 1)
        if strategy.trust_region_state(
            space, History.from_lists(history.configs[:k], values[:k])
        ).needs_centre
    )
    short = History.from_lists(history.configs[:cut], values[:cut])
    config = strategy.suggest(space, short, 1, np.random.default_rng(0))[0]
    assert tuple(config.values()) not in {tuple(c.values()) for c in short.configs}


def test_two_processes_agree_on_the_state_and_a_copy_continues_identically() -> None:
    space = _cat_space()
    history = _history(space, _cat_objective, 40, 4)
    a, b = (
        Casmopolitan(CasmopolitanOptions(n_init=10)),
        Casmopolitan(CasmopolitanOptions(n_init=10)),
    )
    assert a.trust_region_state(space, history) == b.trust_region_state(space, history)
    a.suggest(space, history, 1, np.random.default_rng(0))  # warm its GP cache
    copy = pickle.loads(pickle.dumps(a))
    x = a.suggest(space, history, 1, np.random.default_rng(7))
    y = copy.suggest(space, history, 1, np.random.default_rng(7))
    assert x == y


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_local_search_failure_degrades_with_a_warning(monkeypatch) -> None:
    import common.methods.casmopolitan.strategy as casmopolitan

    def boom(*args, **kwargs):
        raise RuntimeError("numerical trouble")

    monkeypatch.setattr(casmopolitan, "local_optima", boom)
    space = _cat_space()
    history = _history(space, _cat_objective, 20, 5)
    strategy = Casmopolitan(CasmopolitanOptions())
    state = strategy.trust_region_state(space, history)
    assert not state.needs_centre
    records = _Records()
    logger = logging.getLogger("mixbo")  # the core's logger outside an adapter
    logger.addHandler(records)
    try:
        configs = strategy.suggest(space, history, 1, np.random.default_rng(0))
    finally:
        logger.removeHandler(records)
    assert any("Local search failed" in m for m in records.messages)
    X = space.encode(history.configs)
    region = region_of(state, X[state.best_index], space.cat_dims, space.cont_dims)
    assert region.contains(space.encode(configs)).all()  # a random point of the region instead


def test_constant_objective_does_not_break_the_strategy() -> None:
    space = _mixed_space()
    configs = space.decode(space.sample(15, np.random.default_rng(6)))
    history = History.from_lists(configs, np.zeros(15))
    out = Casmopolitan(CasmopolitanOptions(n_init=5)).suggest(
        space, history, 1, np.random.default_rng(0)
    )
    assert len(out) == 1


def test_sampler_finds_a_hidden_categorical_target() -> None:
    # 12 three-way choices: random search hits f = 0 with probability 3**-12 per trial
    space = {f"h{i}": optuna.distributions.CategoricalDistribution((0, 1, 2)) for i in range(12)}
    study = optuna.create_study(sampler=CasmopolitanSampler(seed=0, n_startup_trials=8))
    for _ in range(45):
        trial = study.ask(space)
        study.tell(trial, _cat_objective(trial.params))
    assert study.best_value <= 1.0
    random_study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    random_study.optimize(
        lambda t: _cat_objective({n: t.suggest_categorical(n, (0, 1, 2)) for n in space}),
        n_trials=45,
    )
    assert study.best_value < random_study.best_value


def test_sampler_is_reproducible_with_a_seed() -> None:
    def run() -> list[dict]:
        study = optuna.create_study(sampler=CasmopolitanSampler(seed=3, n_startup_trials=4))
        study.optimize(
            lambda t: _mixed_objective(
                {
                    **{f"c{i}": t.suggest_categorical(f"c{i}", ("a", "b", "c")) for i in range(6)},
                    "x": t.suggest_float("x", -2.0, 2.0),
                    "n": t.suggest_int("n", 1, 32, log=True),
                    "s": t.suggest_float("s", 0.0, 1.0, step=0.25),
                }
            ),
            n_trials=8,
        )
        return [t.params for t in study.trials]

    assert run() == run()


def test_sampler_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        CasmopolitanSampler(acquisition="pi")
    with pytest.raises(ValueError):
        CasmopolitanSampler(failure_tolerance=0)
    with pytest.raises(ValueError):
        CasmopolitanSampler(n_startup_trials=-1)


def test_expected_improvement_is_over_the_centres_observed_value(monkeypatch) -> None:
    import common.methods.casmopolitan.strategy as casmopolitan
    from common.models.warpings import standardise

    seen = []

    def capture(acqf, space, *args, **kwargs):
        seen.append(acqf)
        return np.zeros((1, space.dim)), np.array([-np.inf])  # nothing found: a random row

    monkeypatch.setattr(casmopolitan, "local_optima", capture)
    space = _mixed_space()
    history = _history(space, _mixed_objective, 20, 3)
    strategy = Casmopolitan(CasmopolitanOptions())
    state = strategy.trust_region_state(space, history)
    strategy.suggest(space, history, 1, np.random.default_rng(0))
    observed = -standardise(np.asarray(history.values))[state.best_index]
    assert float(seen[0].best_f) == pytest.approx(observed)  # not the GP mean there


def test_refits_continue_from_the_previous_fit_for_a_capped_number_of_iterations(
    fit_caps,
) -> None:
    """The first fit runs to the full cap; later refits, warm-started, to ``WARM_FIT_MAXITER``
    (each fit fits both forms of the transformed overlap kernel:
    :mod:`common.models.kernel_choice`)."""
    import common.models.gp as gp

    space = _mixed_space()
    strategy = Casmopolitan(CasmopolitanOptions(n_init=10))
    history = _history(space, _mixed_objective, 26, 3)
    for n in (20, 22, 24, 26):
        part = History.from_lists(history.configs[:n], history.values[:n])
        assert not strategy.trust_region_state(space, part).needs_centre
        strategy.suggest(space, part, 1, np.random.default_rng(n))
    assert fit_caps == [gp.FIT_MAXITER] * 2 + [gp.WARM_FIT_MAXITER] * 6


def _front_history(xs, weights) -> History:
    """Two objectives ``(x, 1 − x)`` observed at ``xs``: every point is on the front; the history
    one suggestion models (the Chebyshev scalarisation of ``weights``, the per-objective values
    kept)."""
    import dataclasses

    from common.acquisition.scalarization import scalarize

    configs = [{"x": float(x)} for x in xs]
    objectives = np.array([[x, 1.0 - x] for x in xs])
    history = History(tuple(configs), objectives.sum(1), objectives=objectives)
    return dataclasses.replace(history, values=scalarize(history, np.asarray(weights)))


@pytest.mark.parametrize("weights", [(0.9, 0.1), (0.1, 0.9), (0.97, 0.03)])
def test_a_multi_objective_suggestion_fills_the_fronts_widest_gap(weights) -> None:
    """Log EHVI of per-objective models: wherever the scalarisation centres the trust region
    (here on the dense ends of the front), the suggestion lands in the front's one wide gap; the
    scalarisation's own EI would refine beside its optimum, inside the dense part."""
    xs = [0.0, 0.04, 0.08, 0.12, 0.16, 0.2, 0.85, 0.9, 0.95, 1.0]
    space = MixedSpace([Float("x", 0.0, 1.0)])
    strategy = Casmopolitan(CasmopolitanOptions(n_init=len(xs)))
    history = _front_history(xs, weights)
    (config,) = strategy.suggest(space, history, 1, np.random.default_rng(0))
    assert 0.22 < config["x"] < 0.83


@pytest.mark.parametrize("pending", ["playbook", "kriging_believer", "ignore"])
def test_a_multi_objective_batch_believes_its_busy_points_without_a_fallback(pending) -> None:
    """Running trials and a batch's earlier picks count in a multi-objective study (penalised by
    PLAyBOOK, or believed by the objectives' models), with no local search failing into a random
    point."""
    from common.batch.busy import BusyPolicy

    xs = [0.0, 0.04, 0.08, 0.12, 0.16, 0.2, 0.85, 0.9, 0.95, 1.0]
    space = MixedSpace([Float("x", 0.0, 1.0)])
    history = dataclasses.replace(_front_history(xs, (0.5, 0.5)), pending=({"x": 0.5},))
    strategy = Casmopolitan(CasmopolitanOptions(n_init=len(xs)), BusyPolicy(pending=pending))
    records = _Records()
    logger = logging.getLogger("mixbo")
    logger.addHandler(records)
    try:
        configs = strategy.suggest(space, history, 3, np.random.default_rng(0))
    finally:
        logger.removeHandler(records)
    assert not records.messages
    picks = sorted(c["x"] for c in configs)
    apart = min(abs(x - 0.5) for x in picks) > 0.02 and min(np.diff(picks)) > 0.02
    assert apart == (pending != "ignore")  # ignored, the batch stacks on one maximiser
