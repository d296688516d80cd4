"""CASMOPOLITAN's trust regions (state rules, geometry) and transformed overlap kernel."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from common.methods.casmopolitan import strategy as casmopolitan_strategy
from common.methods.casmopolitan.options import CasmopolitanOptions
from common.methods.casmopolitan.strategy import Casmopolitan
from common.methods.casmopolitan.trust_region import (
    LENGTH_INIT,
    LENGTH_MIN,
    LOCAL_DATA,
    TrustRegionConfig,
    box_bounds,
    default_failure_tolerance,
    default_hamming_failure_tolerance,
    initial_state,
    nearest_rows,
    region_of,
    replay,
    update_state,
    within_reach,
)
from common.models.gp import fit_gp
from common.models.kernels.mixture import casmopolitan_kernel
from common.models.kernels.overlap import TransformedOverlapKernel, _matches
from common.models.refit import refit_due
from common.space.history import History
from common.space.mixed_space import Categorical, Float, MixedSpace


def _config(n_cat=25, n_cont=0, n_init=0, fail=4, succ=3) -> TrustRegionConfig:
    return TrustRegionConfig.for_dims(
        n_cat, n_cont, n_init, failure_tolerance=fail, success_tolerance=succ
    )


def _feed(state, values):
    for v in values:
        state = update_state(state, v)
    return state


# ---------------------------------------------------------------------- state rules
def test_initial_lengths_follow_the_reference_and_the_dimension() -> None:
    state = initial_state(_config(n_cat=25, n_cont=3))
    assert state.length == LENGTH_INIT == 0.8
    assert state.hamming == 20 and state.config.hamming_max == 25
    assert state.config.length_min == 2.0**-7 and state.config.length_max == 1.6
    assert initial_state(_config(n_cat=50)).hamming == 40
    assert initial_state(_config(n_cat=2)).hamming == 2


def test_default_tolerances_are_turbos_rule_on_each_regions_own_dimension() -> None:
    assert [default_failure_tolerance(d) for d in (0, 1, 3, 4, 10, 53)] == [4, 4, 4, 4, 10, 53]
    assert [default_hamming_failure_tolerance(d) for d in (1, 4, 25, 50)] == [4, 4, 25, 50]
    config = TrustRegionConfig.for_dims(50, 3)  # Ackley-53: 50 binary, 3 continuous
    assert (config.failure_tolerance, config.hamming_failure_tolerance) == (4, 50)
    config = TrustRegionConfig.for_dims(25, 0)
    assert (config.failure_tolerance, config.hamming_failure_tolerance) == (4, 25)
    config = TrustRegionConfig.for_dims(2, 8, failure_tolerance=40)
    assert (config.failure_tolerance, config.hamming_failure_tolerance) == (40, 40)


def test_box_and_hamming_ball_shrink_on_their_own_default_tolerances() -> None:
    config = TrustRegionConfig.for_dims(25, 2)
    assert (config.failure_tolerance, config.hamming_failure_tolerance) == (4, 25)
    state = _feed(initial_state(config), [10.0] + [11.0] * 4)
    assert state.length == pytest.approx(0.8 / 1.5) and state.hamming == 20
    state = _feed(state, [11.0] * 21)  # 25 failures in a row: the ball shrinks once
    assert state.hamming == 13 and state.length == pytest.approx(0.8 / 1.5**6)
    state = update_state(state, 5.0)  # a success resets both runs
    assert (state.n_failure, state.n_hamming_failure) == (0, 0)


def test_expansion_after_a_run_of_successes() -> None:
    state = _feed(initial_state(_config(n_cat=25, n_cont=2)), [10.0])
    state = _feed(state, [9.0, 8.0])
    assert (state.n_success, state.length, state.hamming) == (2, 0.8, 20)
    state = update_state(state, 7.0)
    assert state.n_success == 0
    assert state.length == pytest.approx(1.2)
    assert state.hamming == 25  # int(20 × 1.5) = 30, capped at d_h
    state = _feed(state, [6.0, 5.0, 4.0])
    assert state.length == pytest.approx(1.6)  # capped at the maximum


def test_small_hamming_radius_still_grows() -> None:
    state = _feed(initial_state(_config(n_cat=25, fail=1)), [10.0] * 6)  # 20→13→8→5→3→2
    assert state.hamming == 2
    state = _feed(state, [9.0, 8.0, 7.0])
    assert state.hamming == 3


def test_shrinking_after_a_run_of_failures() -> None:
    state = _feed(initial_state(_config(n_cat=25, n_cont=2, fail=4)), [10.0])
    state = _feed(state, [10.0, 11.0, 12.0])
    assert (state.n_failure, state.hamming) == (3, 20)
    state = update_state(state, 10.0)
    assert state.n_failure == 0
    assert state.length == pytest.approx(0.8 / 1.5)
    assert state.hamming == 13  # int(20 / 1.5)


def test_improvement_below_the_threshold_is_a_failure_but_moves_the_centre() -> None:
    state = _feed(initial_state(_config(fail=10)), [100.0])
    state = update_state(state, 99.95)  # less than 1e-3 × 100 better
    assert state.n_failure == 1 and state.n_success == 0
    assert state.best_index == 1 and state.best_value == 99.95
    state = update_state(state, 99.0)
    assert state.n_success == 1 and state.n_failure == 0


def test_a_success_resets_the_failure_run() -> None:
    state = _feed(initial_state(_config(fail=3)), [10.0, 11.0, 11.0, 9.0, 11.0, 11.0])
    assert state.hamming == 20 and state.n_failure == 2


def test_initial_design_is_not_counted() -> None:
    state = _feed(initial_state(_config(n_init=5, fail=1)), [5.0, 6.0, 7.0, 4.0, 8.0])
    assert (state.n_success, state.n_failure, state.hamming) == (0, 0, 20)
    assert state.best_index == 3
    assert update_state(state, 9.0).hamming == 13


def test_restart_when_the_hamming_radius_collapses() -> None:
    config = _config(n_cat=25, n_cont=3, fail=2)
    values = [5.0, 3.0] + [9.0] * 13
    state = _feed(initial_state(config), values)
    assert state.hamming == 1 and state.restart == 0  # 20→13→8→5→3→2→1 after 12 failures
    state = update_state(state, 9.0)  # the 14th failure: 1 → 0 < minimum
    assert state.restart == 1
    assert state.restart_bests == (1,)  # index of the old restart's best value, 3.0
    assert state.needs_centre and state.start == 16 and state.n_seen == 16
    assert (state.hamming, state.length, state.n_failure) == (20, LENGTH_INIT, 0)
    state = update_state(state, 50.0)  # the restart's first point becomes its centre
    assert not state.needs_centre and state.best_index == 16 and state.best_value == 50.0
    state = update_state(state, 40.0)
    assert state.n_success == 1


def test_restart_when_the_box_collapses_on_a_continuous_space() -> None:
    config = _config(n_cat=0, n_cont=4, fail=1)
    shrinks = math.ceil(math.log(LENGTH_INIT / LENGTH_MIN) / math.log(1.5))  # 12
    state = _feed(initial_state(config), [1.0] + [2.0] * (shrinks - 1))
    assert state.restart == 0 and state.length >= LENGTH_MIN
    state = update_state(state, 2.0)
    assert state.restart == 1 and state.length == LENGTH_INIT


# ---------------------------------------------------------------------- replay
def _random_values(rng: np.random.Generator, n: int) -> np.ndarray:
    # mostly failures with occasional improvements: several shrinks and restarts
    return np.where(rng.random(n) < 0.15, -np.arange(n) * 0.1, 5.0 + rng.random(n))


def test_replay_is_a_pure_function_of_the_ordered_values() -> None:
    rng = np.random.default_rng(0)
    values = _random_values(rng, 200)
    config = _config(n_cat=25, n_cont=3, n_init=10, fail=3)
    a, b = replay(values, config), replay(list(values), config)
    assert a == b and a.restart >= 2
    assert replay(values[::-1], config) != a  # the order matters


def test_incremental_updates_equal_a_full_replay() -> None:
    rng = np.random.default_rng(1)
    values = _random_values(rng, 150)
    config = _config(n_cat=10, n_cont=2, n_init=5, fail=2)
    state = initial_state(config)
    for k, v in enumerate(values, start=1):
        state = update_state(state, v)
        if k % 10 == 0 or k == len(values):
            assert state == replay(values[:k], config)
    assert state.restart >= 1 and state.n_seen == len(values)


# ---------------------------------------------------------------------- geometry
def test_box_sides_follow_the_ard_lengthscales() -> None:
    lo, hi = box_bounds(np.full(3, 0.5), 0.4, np.array([0.5, 1.0, 2.0]))
    sides = hi - lo
    assert sides[0] < sides[1] < sides[2]
    assert np.exp(np.mean(np.log(sides))) == pytest.approx(0.4)
    assert sides[2] / sides[0] == pytest.approx(4.0)
    lo, hi = box_bounds(np.array([0.05]), 0.4, None)
    assert lo[0] == 0.0 and hi[0] == pytest.approx(0.25)  # clipped to the unit cube


def test_region_of_caps_the_ball_and_clips_the_box() -> None:
    state = replace(initial_state(_config(n_cat=3, n_cont=2)), hamming=5, length=0.2)
    centre = np.array([0.0, 1.0, 2.0, 0.5, 0.95])
    region = region_of(state, centre, (0, 1, 2), (3, 4))
    assert region.hamming == 3  # no larger than the number of categoricals
    np.testing.assert_allclose(region.lower, [0.4, 0.85])
    np.testing.assert_allclose(region.upper, [0.6, 1.0])  # clipped to the unit cube
    rows = np.array(
        [
            centre,
            [1.0, 0.0, 0.0, 0.41, 0.99],  # every category changed, inside the box
            [0.0, 1.0, 2.0, 0.39, 0.95],  # just outside the box
        ]
    )
    assert region.distance(rows).tolist() == [0, 3, 0]
    assert region.contains(rows).tolist() == [True, True, False]
    narrow = region_of(replace(state, hamming=1), centre, (0, 1, 2), (3, 4))
    assert narrow.contains(rows).tolist() == [True, False, False]


# ---------------------------------------------------------------------- kernel
def _naive(X1: torch.Tensor, X2: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.exp((_matches(X1, X2, False) * w).sum(-1) / w.sum())


def test_transformed_overlap_matches_its_formula() -> None:
    gen = torch.Generator().manual_seed(0)
    kernel = TransformedOverlapKernel(6).double()
    kernel.weights = torch.rand(6, generator=gen, dtype=torch.float64) * 0.9 + 0.05
    w = kernel.weights.reshape(-1)
    X1 = torch.randint(0, 4, (9, 6), generator=gen).double()
    X2 = torch.randint(0, 4, (5, 6), generator=gen).double()
    assert torch.allclose(kernel(X1, X2).to_dense(), _naive(X1, X2, w))
    assert torch.allclose(kernel(X1, diag=True), torch.full((9,), math.e, dtype=torch.float64))
    # many choices: the one-hot path is too wide and the comparison path takes over
    X3 = torch.randint(0, 1000, (7, 6), generator=gen).double()
    X3[1] = X3[0]
    assert torch.allclose(kernel(X3, X3).to_dense(), _naive(X3, X3, w))
    batch = torch.randint(0, 3, (2, 4, 6), generator=gen).double()
    assert torch.allclose(kernel(batch, batch).to_dense(), _naive(batch, batch, w))


def test_the_papers_form_is_eq_5_11_divided_by_its_diagonal() -> None:
    gen = torch.Generator().manual_seed(3)
    kernel = TransformedOverlapKernel(5, form="paper").double()
    kernel.weights = torch.rand(5, generator=gen, dtype=torch.float64) * 3 + 0.1
    w = kernel.weights.reshape(-1)
    X1 = torch.randint(0, 3, (8, 5), generator=gen).double()
    X2 = torch.randint(0, 3, (6, 5), generator=gen).double()
    paper = torch.exp((_matches(X1, X2, False) * w).sum(-1) / 5)  # Eq 5.11 as printed
    assert torch.allclose(kernel(X1, X2).to_dense(), paper / torch.exp(w.sum() / 5))
    assert torch.allclose(kernel(X1, diag=True), torch.ones(8, dtype=torch.float64))


def test_the_papers_weights_set_how_fast_correlation_falls_and_the_codes_do_not() -> None:
    """Scaling every weight changes the paper's kernel (the scale is learnt) and leaves the
    code's, normalised by the weights' sum, as it was."""
    x = torch.zeros(1, 4, dtype=torch.float64)
    far = torch.ones(1, 4, dtype=torch.float64)  # differs in every coordinate
    reach: dict[str, list[float]] = {"paper": [], "code": []}
    for form, values in reach.items():
        for scale in (0.5, 1.0, 4.0):
            kernel = TransformedOverlapKernel(4, form=form).double()
            kernel.weights = torch.tensor([1.0, 2.0, 0.5, 1.5], dtype=torch.float64) * scale
            k = kernel(x, far).to_dense() / kernel(x, diag=True)
            values.append(float(k.detach()))
    assert reach["paper"][0] > reach["paper"][1] > reach["paper"][2]
    assert reach["paper"][1] == pytest.approx(math.exp(-5.0 / 4))
    assert reach["code"] == pytest.approx([math.exp(-1.0)] * 3)


def test_the_papers_weights_start_at_their_priors_mode() -> None:
    kernel = TransformedOverlapKernel(3, form="paper")
    assert torch.allclose(kernel.weights, torch.full((1, 3), math.e))
    prior = dict((n, p) for n, _, p, _, _ in kernel.named_priors())["log_weights_prior"]
    assert float(prior.loc) == 1.0
    with pytest.raises(ValueError, match="form"):
        TransformedOverlapKernel(3, form="normalised")


@pytest.mark.parametrize("form", ["code", "paper"])
@pytest.mark.parametrize("ard", [True, False])
def test_transformed_overlap_is_positive_semi_definite(ard: bool, form: str) -> None:
    gen = torch.Generator().manual_seed(1)
    kernel = TransformedOverlapKernel(10, ard=ard, form=form).double()
    kernel.weights = torch.rand(10 if ard else 1, generator=gen, dtype=torch.float64)
    X = torch.randint(0, 3, (60, 10), generator=gen).double()
    assert torch.linalg.eigvalsh(kernel(X).to_dense()).min() > -1e-9


def test_mixed_casmopolitan_kernel_is_positive_semi_definite() -> None:
    gen = torch.Generator().manual_seed(2)
    X = torch.cat(
        [torch.randint(0, 3, (50, 5), generator=gen).double(), torch.rand(50, 2, generator=gen)],
        dim=1,
    ).double()
    kernel = casmopolitan_kernel([5, 6], [0, 1, 2, 3, 4]).double()
    assert torch.linalg.eigvalsh(kernel(X).to_dense()).min() > -1e-9


def test_ard_weights_make_a_dimension_matter_more() -> None:
    kernel = TransformedOverlapKernel(3).double()
    kernel.weights = torch.tensor([1.0, 0.02, 0.5], dtype=torch.float64)
    x = torch.tensor([[0.0, 0.0, 0.0]], dtype=torch.float64)
    flip = torch.eye(3, dtype=torch.float64)  # change one coordinate at a time
    k = kernel(x, flip).to_dense().detach().reshape(-1)
    assert k[0] < k[2] < k[1] < math.e
    assert k[1] == pytest.approx(math.exp(1.5 / 1.52))


def test_fitted_weights_find_the_relevant_dimensions() -> None:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(80, 6)).astype(float)
    y = 2.0 * (X[:, 0] == 1) - 1.5 * (X[:, 3] == 2) + 0.01 * rng.standard_normal(80)
    model, _ = fit_gp(X, y, lambda: casmopolitan_kernel((), range(6)))
    w = model.covar_module.base_kernel.weights.detach().numpy().reshape(-1)
    assert set(np.argsort(-w)[:2]) == {0, 3}


def test_the_strategys_state_grows_with_the_history_as_a_full_replay_gives_it(
    monkeypatch,
) -> None:
    replays = []
    monkeypatch.setattr(
        casmopolitan_strategy, "replay", lambda v, c, o: replays.append(len(v)) or replay(v, c, o)
    )
    space = MixedSpace([Categorical("c", ["a", "b", "c"]), Float("x", 0.0, 1.0)])
    rng = np.random.default_rng(0)
    configs = space.decode(space.sample(120, rng))
    values = rng.standard_normal(120).cumsum()  # runs of successes and failures: restarts too
    strategy = Casmopolitan(CasmopolitanOptions(n_init=5))
    config = TrustRegionConfig.for_dims(1, 1, 5)
    lengths = [10, 11, 12, 40, 40, 41, 120]
    for n in lengths:
        state = strategy.trust_region_state(space, History(tuple(configs[:n]), values[:n]))
        assert state == replay(values[:n], config)
    changed = values.copy()
    changed[3] -= 5.0  # an earlier value differs (another history): replayed from the start
    state = strategy.trust_region_state(space, History(tuple(configs), changed))
    assert state == replay(changed, config) != replay(values, config)
    assert replay(values, config).restart > 0
    assert replays == [10, 120]  # the first and the changed history; the others grew


# ---------------------------------------------------------------------- local data
def test_the_nearest_rows_count_mismatched_categories_and_numeric_distance() -> None:
    X = np.array(
        [
            [0, 0, 0.50],  # the centre
            [1, 1, 0.50],  # two categories off
            [0, 0, 0.90],  # 0.4 away on the numeric column
            [1, 0, 0.50],  # one category off
            [0, 0, 0.45],  # 0.05 away
            [0, 1, 0.45],  # one category and 0.05 off
        ]
    )
    centre = X[0]
    assert list(nearest_rows(X, centre, [0, 1], [2], k=3)) == [0, 2, 4]  # in history order
    assert list(nearest_rows(X, centre, [0, 1], [2], k=4)) == [0, 2, 3, 4]  # tie: the earlier
    assert list(nearest_rows(X, centre, [0, 1], [2], k=6)) == list(range(6))
    assert list(nearest_rows(X[:2], centre, [0, 1], [2])) == [0, 1]  # short: every row


def test_the_hamming_radius_is_cut_to_the_modelled_rows_reach() -> None:
    config = TrustRegionConfig.for_dims(n_cat=6, n_cont=1)
    state = initial_state(config)  # radius round(0.8 * 6) = 5
    X = np.array([[0, 0, 0, 0, 0, 0, 0.5], [1, 1, 0, 0, 0, 0, 0.2], [0, 1, 0, 0, 0, 0, 0.9]])
    assert state.hamming == 5
    assert within_reach(state, X, 0, range(6)).hamming == 2
    assert within_reach(state, X, 1, range(6)).hamming == 2  # from another centre
    assert within_reach(state, X[:1], 0, range(6)).hamming == 1  # never below 1
    assert within_reach(replace(state, hamming=1), X, 0, range(6)).hamming == 1  # never wider
    no_cat = initial_state(TrustRegionConfig.for_dims(n_cat=0, n_cont=2))
    assert within_reach(no_cat, X[:, 5:], 0, []) == no_cat


def test_a_long_studys_proposals_stay_where_its_model_has_rows() -> None:
    """Past LOCAL_DATA observations, trials far from the centre are not modelled; the next
    suggestion stays within the nearest rows' Hamming reach (one flip here), not at the ball's
    radius of 0.8·8 flips, where nothing the model sees tells it the study's far trials were bad."""
    space = MixedSpace([Categorical(f"b{i}", [0, 1]) for i in range(8)] + [Float("x", 0.0, 1.0)])
    rng = np.random.default_rng(1)
    near = np.zeros((LOCAL_DATA + 10, 9))
    flips = rng.integers(0, 8, len(near))
    near[np.arange(len(near)) % 2 == 1, flips[np.arange(len(near)) % 2 == 1]] = 1  # one flip
    near[:, 8] = rng.random(len(near))
    far = np.hstack([np.ones((40, 6)), np.zeros((40, 2)), rng.random((40, 1))])  # six flips
    X = np.vstack([far, near])
    values = X[:, :8].sum(axis=1) + (X[:, 8] - 0.3) ** 2
    order = np.concatenate([np.arange(40), 40 + np.argsort(-values[40:], kind="stable")])
    X, values = X[order], values[order]  # the near trials improve one on another
    configs = space.decode(X)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=5))
    history = History(tuple(configs), values)
    state = strategy.trust_region_state(space, history)
    assert not state.needs_centre and state.hamming > 1
    centre = X[state.best_index]
    assert centre[:8].sum() <= 1  # a near trial: the far ones are six flips from it
    (suggestion,) = space.encode(strategy.suggest(space, history, 1, np.random.default_rng(0)))
    assert (suggestion[:8] != centre[:8]).sum() <= 1


def test_a_long_studys_trust_region_models_its_nearest_observations(monkeypatch) -> None:
    """Past LOCAL_DATA observations the GP sees the ones nearest the centre (the centre among
    them), refitted when the whole history's length says so."""
    from common.models import kernel_choice

    space = MixedSpace([Categorical("c", ["a", "b", "c"]), Float("x", 0.0, 1.0)])
    rng = np.random.default_rng(3)
    n = LOCAL_DATA + 60
    configs = space.decode(space.sample(n, rng))
    values = np.array([(c["x"] - 0.3) ** 2 + (c["c"] != "b") for c in configs])
    seen, modelled = [], []
    real = kernel_choice.fit_gp_scored
    monkeypatch.setattr(
        kernel_choice, "fit_gp_scored", lambda X, *a, **k: seen.append(len(X)) or real(X, *a, **k)
    )
    picker = Casmopolitan._local_picker

    def local_picker(self, space, model, X, at, *a, **k):
        modelled.append((X, at))
        return picker(self, space, model, X, at, *a, **k)

    monkeypatch.setattr(Casmopolitan, "_local_picker", local_picker)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=5))
    history = History(tuple(configs), values)
    state = strategy.trust_region_state(space, history)
    assert not state.needs_centre
    strategy.suggest(space, history, 1, rng)
    X = space.encode(configs)
    local = nearest_rows(X, X[state.best_index], space.cat_dims, space.cont_dims)
    ((Xn, at),) = modelled
    assert len(local) == len(Xn) == LOCAL_DATA < n
    assert np.array_equal(Xn, X[local])  # every observation the model saw is a near one
    assert local[at] == state.best_index  # the centre among them
    seen.clear()
    for _ in range(3):  # refits per 1% of the whole history's growth, not at every call
        more = space.decode(space.sample(1, rng))
        configs, values = configs + more, np.append(values, 1.0)
        strategy.suggest(space, History(tuple(configs), values), 1, rng)
    refits = sum(refit_due(m, 2) for m in (n + 1, n + 2, n + 3))
    assert seen.count(LOCAL_DATA) == 2 * refits == 2  # two kernel forms; the rest: restart GPs


@pytest.mark.parametrize("n", [40, LOCAL_DATA + 20])
def test_the_models_refit_on_the_whole_historys_cadence_only_where_they_see_part_of_it(
    n, monkeypatch
) -> None:
    """A short history's models (objective, constraints, second opinion) keep the refit cadence
    of their own rows (a constraint reported on some trials only has fewer); a long one's follow
    the history's length."""
    space = MixedSpace([Categorical("c", ["a", "b", "c"]), Float("x", 0.0, 1.0)])
    rng = np.random.default_rng(4)
    configs = space.decode(space.sample(n, rng))
    values = np.array([(c["x"] - 0.3) ** 2 + (c["c"] != "b") for c in configs])
    constraints = np.where(np.arange(n)[:, None] % 3 == 0, np.nan, values[:, None] - 0.5)
    lengths = []
    real = casmopolitan_strategy.constraint_fitter

    def fitter(*a, study_length=None, **k):
        lengths.append(study_length)
        return real(*a, study_length=study_length, **k)

    monkeypatch.setattr(casmopolitan_strategy, "constraint_fitter", fitter)
    strategy = Casmopolitan(CasmopolitanOptions(n_init=5))
    history = History(tuple(configs), values, constraints=constraints)
    assert not strategy.trust_region_state(space, history).needs_centre
    strategy.suggest(space, history, 1, rng)
    assert lengths == [None if n <= LOCAL_DATA else n]
