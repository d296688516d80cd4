"""The additive model's second opinion on CASMOPOLITAN's candidates (MixboSampler)."""

from __future__ import annotations

import logging

import numpy as np
import torch

from common.acquisition.functions import evaluate, log_expected_improvement
from common.methods.casmopolitan.options import CasmopolitanOptions
from common.methods.casmopolitan.strategy import Casmopolitan
from common.methods.casmopolitan.trust_region import region_of
from common.methods.second_opinion import additive_model, applies, best_by_both
from common.optim.local_search import hamming_neighbours
from common.space.history import History
from common.space.mixed_space import Categorical, Float, MixedSpace


def _space(k: int, n: int = 6) -> MixedSpace:
    return MixedSpace(
        [Categorical(f"h{i}", tuple(range(k))) for i in range(n)] + [Float("x", -1.0, 1.0)]
    )


def _objective(config) -> float:
    """Main effects: value 1 of every categorical is best, whatever the others are."""
    return sum(v != 1 for k, v in config.items() if k != "x") + config["x"] ** 2


def _history(space, n: int, seed: int) -> History:
    configs = space.decode(space.sample(n, np.random.default_rng(seed)))
    return History.from_lists(configs, [_objective(c) for c in configs])


def test_it_applies_where_a_categorical_has_three_values_or_more_beside_numbers() -> None:
    assert applies(_space(3)) and applies(MixedSpace([Categorical("a", (0, 1)), *_space(5).params]))
    assert not applies(_space(2))  # a binary change has one alternative: nothing to rank
    assert not applies(MixedSpace([Float("x", 0.0, 1.0)]))
    assert not applies(MixedSpace([Categorical(f"h{i}", tuple(range(5))) for i in range(4)]))


def test_the_row_both_expect_to_improve_is_neither_ones_best() -> None:
    rows = np.array([[0.0], [1.0], [2.0]])
    rng = np.random.default_rng(0)
    first = {0.0: 0.0, 1.0: -1.0, 2.0: -0.2}  # alone, it picks row 0
    second = {0.0: -5.0, 1.0: 0.0, 2.0: -0.3}  # alone, row 1

    def acquisition(values):
        return lambda X: torch.tensor([values[float(x)] for x in X[:, 0, 0]], dtype=X.dtype)

    assert best_by_both(acquisition(first), acquisition(second), rows, rng)[0] == 2.0
    never = {0.0: -np.inf, 1.0: -np.inf, 2.0: -np.inf}
    assert best_by_both(acquisition(first), acquisition(never), rows, rng) is None
    assert best_by_both(acquisition(first), acquisition(second), rows[:0], rng) is None


def test_the_additive_model_ranks_the_fix_of_the_one_wrong_category_first() -> None:
    """49 random configurations and an incumbent with one of six 17-valued categoricals
    wrong: among the incumbent's 96 single-category neighbours the additive model expects most of
    the one that sets it right. Fitted from the priors on all 50 rows (no more than
    ``COLD_SUBSET``), as a study's first fits are."""
    space = _space(17)
    history = _history(space, 49, 0)
    incumbent = {f"h{i}": 1 for i in range(6)} | {"h4": 6, "x": 0.0}
    history = History.from_lists(
        [*history.configs, incumbent], [*history.values, _objective(incumbent)]
    )
    X = space.encode(history.configs)
    model = additive_model(
        Casmopolitan(CasmopolitanOptions()), space, X, np.asarray(history.values), 1
    )
    neighbours = hamming_neighbours(X[-1:], space, np.random.default_rng(0), 1000)[0]
    scores = evaluate(log_expected_improvement(model, model.train_targets[-1]), neighbours)
    best = space.decode(neighbours[int(np.argmax(scores.reshape(-1)))][None])[0]
    assert best == incumbent | {"h4": 1}


def test_the_additive_models_refit_continues_its_last_fit_for_a_few_iterations(
    monkeypatch,
) -> None:
    """Its first fit runs from the priors to the full cap; each refit
    :func:`common.methods.strategy. refit_due` asks for continues the last one for REFIT_MAXITER
    iterations (as a kernel choice's challengers), and the lengths in between condition that fit
    without fitting."""
    import common.models.gp as gp
    from common.methods.second_opinion import REFIT_MAXITER
    from common.models.map_fit import MAPObjective

    iterations = []
    real = MAPObjective.minimise

    def recording(self, maxiter):
        iterations.append(maxiter)
        return real(self, maxiter)

    monkeypatch.setattr(MAPObjective, "minimise", recording)
    space = _space(3)
    history = _history(space, 24, 4)
    X, y = space.encode(history.configs), np.asarray(history.values)
    strategy = Casmopolitan(CasmopolitanOptions())
    for n in (20, 21, 22):
        assert additive_model(strategy, space, X[:n], y[:n], 2) is not None
    assert iterations == [gp.FIT_MAXITER, REFIT_MAXITER]


def _suggestions(options: CasmopolitanOptions, space, history, seeds=range(3)) -> list[dict]:
    strategy = options.make(Casmopolitan(CasmopolitanOptions()).busy)
    return [strategy.suggest(space, history, 1, np.random.default_rng(s))[0] for s in seeds]


def test_a_second_opinion_where_a_categorical_has_three_values_and_the_option_asks() -> None:
    plain = CasmopolitanOptions(n_init=10)
    both = CasmopolitanOptions(n_init=10, second_opinion=True)
    for space, expected in ((_space(2), False), (_space(3), True)):
        history = _history(space, 20, 1)
        X, y = space.encode(history.configs), np.asarray(history.values)
        assert (Casmopolitan(both)._second_model(space, X, y) is not None) is expected
        assert Casmopolitan(plain)._second_model(space, X, y) is None


def test_the_second_opinion_changes_suggestions_inside_the_trust_region() -> None:
    plain = CasmopolitanOptions(n_init=10)
    both = CasmopolitanOptions(n_init=10, second_opinion=True)
    space = _space(8)
    history = _history(space, 30, 1)
    ours = _suggestions(both, space, history)
    assert ours != _suggestions(plain, space, history)
    strategy = Casmopolitan(both)
    state = strategy.trust_region_state(space, history)
    X = space.encode(history.configs)
    region = region_of(state, X[state.best_index], space.cat_dims, space.cont_dims)
    rows = space.encode(ours)
    assert region.distance(rows).max() <= state.hamming  # inside the trust region's ball
    assert not any(config in history.configs for config in ours)


def test_a_failed_additive_fit_leaves_the_product_models_choice_with_a_warning(
    monkeypatch,
) -> None:
    import common.methods.casmopolitan.strategy as casmopolitan

    def boom(*args, **kwargs):
        raise RuntimeError("not positive definite")

    monkeypatch.setattr(casmopolitan, "additive_model", boom)
    space = _space(8)
    history = _history(space, 30, 2)
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger = logging.getLogger("mixbo")
    logger.addHandler(handler)
    try:
        ours = _suggestions(CasmopolitanOptions(n_init=10, second_opinion=True), space, history)
    finally:
        logger.removeHandler(handler)
    assert ours == _suggestions(CasmopolitanOptions(n_init=10), space, history)
    assert any("additive model's fit failed" in m for m in records)


def test_no_second_opinion_beside_ucb_whose_values_are_not_log_ei() -> None:
    space = _space(8)
    history = _history(space, 30, 3)
    both = CasmopolitanOptions(n_init=10, acquisition="ucb", second_opinion=True)
    plain = CasmopolitanOptions(n_init=10, acquisition="ucb")
    assert _suggestions(both, space, history) == _suggestions(plain, space, history)
