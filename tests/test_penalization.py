"""PLAyBOOK's penalisers and the batch/asynchronous behaviour they give every strategy."""

import numpy as np
import pytest
import torch

from common.acquisition.functions import upper_confidence_bound
from common.batch.busy import BusyPolicy
from common.batch.penalization import (
    MIN_SEPARATION,
    MixedDistance,
    acquisition_with_busy_points,
    ball_lipschitz_constants,
    continuous_lengthscales,
    graph_hops,
    lipschitz_constants,
    penalize,
)
from common.methods.bofm.options import BOFMOptions
from common.methods.casmopolitan.options import CasmopolitanOptions
from common.methods.cocabo.bandit import (
    dependent_rounding,
    draw_category_batch,
    exp3m_probabilities,
)
from common.methods.cocabo.options import CoCaBOOptions
from common.methods.cocabo.strategy import CoCaBO
from common.models.gp import DTYPE, fit_gp
from common.models.kernels.mixture import cocabo_kernel
from common.space.history import History
from common.space.mixed_space import Categorical, Float, Integer, MixedSpace

SPACE = MixedSpace([Float("x1", 0, 1), Float("x2", 0, 1), Categorical("h", ("a", "b", "c"))])


def objective(c: dict) -> float:
    return (c["x1"] - 0.3) ** 2 + (c["x2"] - 0.7) ** 2 + 0.3 * (c["h"] != "b")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    configs = SPACE.decode(SPACE.sample(20, rng))
    values = np.array([objective(c) for c in configs])
    X = SPACE.encode(configs)
    model, _ = fit_gp(X, values, lambda: cocabo_kernel([0, 1], [2]))
    return configs, values, X, model


def _penalized(model, busy: np.ndarray, **options):
    """UCB on ``SPACE``'s model, penalised around the ``busy`` rows."""
    best = float(model.train_targets.max())
    rng = np.random.default_rng(0)
    return penalize(
        upper_confidence_bound(model), model, busy, [0, 1], [2], (3,), rng, best=best, **options
    )


@pytest.mark.parametrize("penalizer", ["hlp", "lp"])
def test_penalty_is_zero_at_a_busy_point_and_one_far_away(data, penalizer) -> None:
    _, _, X, model = data
    busy = np.array([[0.3, 0.7, 1.0]])
    acqf = _penalized(model, busy, penalizer=penalizer)
    at = acqf.log_penalty(torch.tensor([[0.3, 0.7, 1.0]], dtype=DTYPE))
    far = acqf.log_penalty(torch.tensor([[1.0, 0.0, 0.0]], dtype=DTYPE))
    if penalizer == "hlp":  # the hard penaliser is 0 at the busy point and 1 beyond its radius
        assert torch.exp(at).item() < 1e-3
        assert torch.exp(far).item() > 0.95
    else:  # González's LP is only *smaller* there (the weakness PLAyBOOK's HLP fixes)
        assert torch.exp(at).item() < 0.5 < torch.exp(far).item()
    # monotone in distance along a ray from the busy point (same category)
    ray = torch.tensor([[0.3 + t, 0.7, 1.0] for t in np.linspace(0, 0.6, 13)], dtype=DTYPE)
    phi = acqf.log_penalty(ray)
    assert torch.all(phi[1:] >= phi[:-1] - 1e-9)


def test_hard_penaliser_radius_is_capped_at_one_distance_unit(data) -> None:
    _, _, _, model = data
    busy = np.array([[0.9, 0.1, 0.0]])  # a poor region: |mu - M| / L alone is several units
    acqf = _penalized(model, busy)
    # the box's Lipschitz constant gives several units; the ball's estimate stops at the cap
    assert float(acqf.r_mean[0] + acqf.r_sigma[0]) >= 1.0 - 1e-9
    d = acqf.distance
    # a point two distance units away along x1 (in lengthscale units) is not penalised
    step = 2.0 * float(d.lengthscales[0])
    x = torch.tensor([[0.9 - step, 0.1, 0.0]], dtype=DTYPE)
    assert float(d(x, torch.tensor(busy, dtype=DTYPE))) == pytest.approx(2.0, rel=1e-6)
    assert torch.exp(acqf.log_penalty(x)).item() > 0.95


def test_the_balls_lipschitz_constant_widens_the_radius_beside_the_optimum(data) -> None:
    """At the model's optimum the mean is flat: the slope over the penalised ball is smaller
    than over a box of one lengthscale, so the radius grows; it never shrinks."""
    _, _, _, model = data
    busy = torch.tensor([[0.3, 0.7, 1.0], [0.9, 0.1, 0.0]], dtype=DTYPE)
    distance = MixedDistance([0, 1], [2], continuous_lengthscales(model, 2))
    rng = np.random.default_rng(0)
    box = lipschitz_constants(model, busy, distance, rng, (3,), local=True)
    best = float(model.train_targets.max())
    ball = ball_lipschitz_constants(model, busy, distance, rng, box, best)
    with torch.no_grad():
        post = model.posterior(busy[:, None, :])
    gap = (best - post.mean.reshape(-1)).abs() + post.variance.sqrt().reshape(-1)
    radius_box, radius_ball = (gap / box).clamp(max=1.0), (gap / ball).clamp(max=1.0)
    assert torch.all(radius_ball >= radius_box - 1e-12)
    assert radius_ball[0] > 1.25 * radius_box[0]  # at the optimum
    assert radius_ball[1] == radius_box[1] == 1.0  # a poor region: at the cap either way


def test_no_candidate_comes_closer_than_the_minimum_separation(data) -> None:
    _, _, _, model = data
    busy = np.array([[0.3, 0.7, 1.0]])
    acqf = _penalized(model, busy)
    near = 0.5 * MIN_SEPARATION
    rows = torch.tensor(
        [[0.3 + near, 0.7, 1.0], [0.3 + 2 * MIN_SEPARATION, 0.7, 1.0], [0.3 + near, 0.7, 2.0]],
        dtype=DTYPE,
    )
    wall = acqf.log_separation(rows)
    assert wall[0] < -100.0  # inside, same category: walled off
    assert wall[1] == 0.0 and wall[2] == 0.0  # outside, or another category: untouched


def test_mixed_distance_counts_category_changes_and_scaled_continuous_steps() -> None:
    d = MixedDistance([0, 1], [2], torch.tensor([0.5, 2.0], dtype=DTYPE))
    busy = torch.tensor([[0.0, 0.0, 0.0]], dtype=DTYPE)
    X = torch.tensor([[0.5, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]], dtype=DTYPE)
    np.testing.assert_allclose(d(X, busy).squeeze(-1).numpy(), [1.0, 1.0, 1.0], atol=1e-6)


def test_graph_hops_count_edges_and_mark_unreachable_values() -> None:
    path = np.diag(np.ones(4), 1) + np.diag(np.ones(4), -1)  # 0 - 1 - 2 - 3 - 4
    np.testing.assert_array_equal(graph_hops(path), np.abs(np.subtract.outer(range(5), range(5))))
    split = np.zeros((3, 3))
    split[0, 1] = split[1, 0] = 1.0  # value 2 is isolated
    assert graph_hops(split)[0, 2] == 3 and graph_hops(split)[0, 1] == 1


def test_mixed_distance_measures_graph_columns_in_edges() -> None:
    path = np.abs(np.subtract.outer(range(5), range(5))).astype(float)
    d = MixedDistance([0], [1, 2], torch.tensor([0.5], dtype=DTYPE), hops=[path, None])
    busy = torch.tensor([[0.0, 1.0, 0.0]], dtype=DTYPE)
    X = torch.tensor([[0.0, 4.0, 0.0], [0.0, 1.0, 2.0], [0.5, 2.0, 0.0]], dtype=DTYPE)
    # three edges along the path; one category change (any); half a unit = one lengthscale + 1 edge
    np.testing.assert_allclose(d(X, busy).squeeze(-1).numpy(), [3.0, 1.0, np.sqrt(2.0)], atol=1e-6)
    assert d.adjacent(0, 2, 5) == [1, 3] and d.adjacent(1, 0, 3) == [1, 2]


MIXED = MixedSpace(
    [
        Float("x1", 0, 1),
        Float("x2", 0, 1),
        Integer("k", 0, 6),
        Categorical("h", ("a", "b", "c")),
    ]
)


def _near(space: MixedSpace, a: dict, b: dict, tol: float = 0.05) -> bool:
    """Same discrete values and every float within ``tol`` of its range."""
    ea, eb = space.encode([a])[0], space.encode([b])[0]
    floats = [i for i, p in enumerate(space.modelled) if isinstance(p, Float)]
    rest = [i for i in range(space.dim) if i not in floats]
    return bool(np.all(np.abs(ea[floats] - eb[floats]) <= tol) and np.all(ea[rest] == eb[rest]))


@pytest.fixture(scope="module")
def mixed_history():
    rng = np.random.default_rng(0)
    configs = MIXED.decode(MIXED.sample(20, rng))
    values = [
        (c["x1"] - 0.3) ** 2 + (c["x2"] - 0.7) ** 2 + 0.3 * (c["h"] != "b") + 0.05 * abs(c["k"] - 3)
        for c in configs
    ]
    return History.from_lists(configs, values)


@pytest.mark.parametrize("options", [CasmopolitanOptions(), BOFMOptions()])
def test_every_strategy_moves_away_from_a_busy_point(mixed_history, options) -> None:
    # Without penalisation the next suggestion sits next to the busy one (same model, same
    # optimiser); PLAyBOOK pushes it out of the busy point's neighbourhood.
    free = options.make(BusyPolicy(pending="ignore")).suggest(
        MIXED, mixed_history, 1, np.random.default_rng(1)
    )
    busy = History(mixed_history.configs, mixed_history.values, tuple(free))
    again = options.make(BusyPolicy(pending="ignore")).suggest(
        MIXED, busy, 1, np.random.default_rng(1)
    )[0]
    assert _near(MIXED, again, free[0])
    moved = options.make(BusyPolicy(pending="playbook")).suggest(
        MIXED, busy, 1, np.random.default_rng(1)
    )[0]
    assert not _near(MIXED, moved, free[0])


@pytest.mark.parametrize("options", [CasmopolitanOptions(), BOFMOptions()])
def test_every_strategy_spreads_a_batch(mixed_history, options) -> None:
    batch = options.make(BusyPolicy()).suggest(MIXED, mixed_history, 3, np.random.default_rng(2))
    assert len(batch) == 3
    for i in range(3):
        for j in range(i):
            assert not _near(MIXED, batch[i], batch[j], tol=0.02)


@pytest.mark.parametrize("pending", ["playbook", "kriging_believer"])
def test_no_suggestion_lands_on_a_busy_point(data, pending) -> None:
    configs, values, X, _ = data
    history = History.from_lists(configs, values)
    free = CoCaBO(CoCaBOOptions(n_init=5), BusyPolicy(pending="ignore")).suggest(
        SPACE, history, 1, np.random.default_rng(1)
    )
    busy_history = History(history.configs, history.values, tuple(free))
    strategy = CoCaBO(CoCaBOOptions(n_init=5), BusyPolicy(pending=pending))
    new = strategy.suggest(SPACE, busy_history, 1, np.random.default_rng(1))[0]
    a, b = SPACE.encode([new])[0], SPACE.encode(free)[0]
    if a[2] == b[2]:  # same category: the continuous part must move away
        assert np.linalg.norm(a[:2] - b[:2]) > 0.02


def test_a_batch_has_distinct_points_and_ignore_can_repeat(data) -> None:
    configs, values, _, _ = data
    history = History.from_lists(configs, values)
    batch = CoCaBO(CoCaBOOptions(n_init=5)).suggest(SPACE, history, 4, np.random.default_rng(2))
    enc = SPACE.encode(batch)
    for i in range(4):
        for j in range(i):
            same_cat = enc[i, 2] == enc[j, 2]
            assert not same_cat or np.linalg.norm(enc[i, :2] - enc[j, :2]) > 0.02


def test_kriging_believer_conditions_on_the_mean(data) -> None:
    _, _, _, model = data
    busy = np.array([[0.3, 0.7, 1.0]])
    acqf = acquisition_with_busy_points(
        lambda m: upper_confidence_bound(m),
        model,
        busy,
        [0, 1],
        [2],
        (3,),
        np.random.default_rng(0),
        policy=BusyPolicy(pending="kriging_believer"),
    )
    x = torch.tensor(busy, dtype=DTYPE)
    assert acqf.model.posterior(x).variance.item() < model.posterior(x).variance.item()


def test_invalid_pending_options_are_explained() -> None:
    with pytest.raises(ValueError, match="pending must be one of"):
        BusyPolicy(pending="liar")
    with pytest.raises(ValueError, match="penalizer"):
        BusyPolicy(penalizer="soft")
    with pytest.raises(ValueError, match="lipschitz"):
        BusyPolicy(lipschitz="tight")


def test_exp3m_marginals_are_capped_and_sum_to_the_batch_size() -> None:
    p = exp3m_probabilities(np.log(np.array([1.0, 1.0, 1.0, 500.0, 1.0])), 0.1, 3)
    assert p.sum() == pytest.approx(3.0)
    assert p.max() <= 1.0 + 1e-12 and p[3] == pytest.approx(1.0)


def test_dependent_rounding_draws_distinct_arms_with_the_marginals() -> None:
    rng = np.random.default_rng(0)
    p = np.array([0.2, 0.9, 0.5, 0.4])
    counts = np.zeros(4)
    for _ in range(3000):
        chosen = dependent_rounding(p, rng)
        assert len(chosen) == 2 and len(set(chosen)) == 2
        counts[chosen] += 1
    np.testing.assert_allclose(counts / 3000, p, atol=0.04)


def test_category_batch_covers_all_arms_when_the_batch_is_larger() -> None:
    rows = draw_category_batch([np.zeros(3), np.zeros(5)], 200, 4, np.random.default_rng(0))
    assert set(rows[:, 0]) == {0, 1, 2}  # 3 arms, batch of 4: every arm at least once
    assert len(set(rows[:, 1])) == 4  # 5 arms, batch of 4: distinct arms
