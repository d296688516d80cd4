import math

import numpy as np
import pytest

from common.methods.cocabo.bandit import (
    category_rewards,
    draw_categories,
    exp3_gamma,
    exp3_probabilities,
    exp3_update,
    replay_exp3,
)


def test_gamma_follows_auers_schedule() -> None:
    # N = 3, T = 200: sqrt(3 ln 3 / ((e - 1) * 400/3)) ~= 0.12 (the reference's value)
    assert exp3_gamma(3, 200) == pytest.approx(
        math.sqrt(3 * math.log(3) / ((math.e - 1) * 400 / 3))
    )
    assert exp3_gamma(3, 200) == pytest.approx(0.12, abs=0.005)
    assert exp3_gamma(1, 200) == 0.0
    assert exp3_gamma(50, 1) == 1.0


def test_probabilities_mix_weights_with_uniform() -> None:
    p = exp3_probabilities(np.log(np.array([1.0, 3.0])), gamma=0.2)
    np.testing.assert_allclose(p, [0.8 * 0.25 + 0.1, 0.8 * 0.75 + 0.1])
    assert p.sum() == pytest.approx(1.0)


def test_probabilities_survive_huge_log_weights() -> None:
    p = exp3_probabilities(np.array([1e5, 0.0, -1e5]), gamma=0.1)
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)
    assert p.min() == pytest.approx(0.1 / 3)


def test_update_changes_only_the_pulled_arm_by_importance_weighted_reward() -> None:
    lw = np.zeros(4)
    out = exp3_update(lw, arm=2, reward=0.5, prob=0.25, gamma=0.1)
    np.testing.assert_allclose(out, [0, 0, 0.1 * 0.5 / (0.25 * 4), 0])
    np.testing.assert_array_equal(lw, np.zeros(4))  # pure function


def test_rewards_rank_the_chosen_categorys_best_among_the_variables_categories() -> None:
    codes = np.array([[0, 1], [1, 1], [0, 0], [1, 0]])
    values = np.array([5.0, 1.0, 3.0, 1000.0])
    # last pull chose (1, 0): the best of h1=1 is 1.0, better than h1=0's 3.0 -> 1;
    # the best of h2=0 is 3.0, worse than h2=1's 1.0 -> 0 (the outlier plays no part)
    np.testing.assert_allclose(category_rewards(codes, values), [1.0, 0.0])
    np.testing.assert_allclose(category_rewards(codes[:1], values[:1]), [0.0, 0.0])
    # ties count half: h1's two categories share the best value
    np.testing.assert_allclose(category_rewards(codes[:2], np.array([1.0, 1.0])), [0.5, 0.0])


def test_a_few_lucky_values_do_not_make_every_category_look_best() -> None:
    """Every arm once found a good value; arm 2 the best, arm 3 the next: ranked among all
    observations each of their rewards would be about 1 and the weights would not separate."""
    codes = np.tile(np.arange(5), 40)[:, None]
    values = np.ones(200)
    values[10:15] = [0.5, 0.5, 0.0, 0.01, 0.5]  # the best of arms 0, 1, 2, 3, 4
    p = exp3_probabilities(replay_exp3(codes, values, (5,), 10, 200)[0], exp3_gamma(5, 200))
    assert p[2] > p[3] > max(p[0], p[1], p[4])
    assert p[2] > 0.3 and max(p[0], p[1], p[4]) < 0.15


def test_replay_prefers_the_rewarding_category_and_ignores_the_initial_design() -> None:
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(60, 1))
    values = np.where(codes[:, 0] == 2, 0.0, 1.0) + 0.01 * rng.random(60)
    log_w = replay_exp3(codes, values, (3,), n_init=10, horizon=200)[0]
    assert np.argmax(log_w) == 2
    untouched = replay_exp3(codes[:10], values[:10], (3,), n_init=10, horizon=200)[0]
    np.testing.assert_array_equal(untouched, np.zeros(3))


def test_replay_is_a_pure_function_of_the_history() -> None:
    rng = np.random.default_rng(1)
    codes, values = rng.integers(0, 4, size=(40, 2)), rng.random(40)
    a = replay_exp3(codes, values, (4, 4), 5, 100)
    b = replay_exp3(codes.copy(), values.copy(), (4, 4), 5, 100)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_one_choice_variable_is_never_updated_and_always_drawn_as_zero() -> None:
    codes = np.zeros((20, 1), dtype=int)
    log_w = replay_exp3(codes, np.arange(20.0), (1,), n_init=2, horizon=50)
    np.testing.assert_array_equal(log_w[0], [0.0])
    assert draw_categories(log_w, 50, np.random.default_rng(0)).tolist() == [0]


def test_draws_follow_the_probabilities() -> None:
    log_w = [np.log(np.array([1.0, 1.0, 98.0]))]
    rng = np.random.default_rng(0)
    draws = [draw_categories(log_w, 10_000, rng)[0] for _ in range(2000)]
    p = exp3_probabilities(log_w[0], exp3_gamma(3, 10_000))
    assert np.mean(np.array(draws) == 2) == pytest.approx(p[2], abs=0.03)


def test_an_unused_variable_is_neither_pulled_nor_rewarded():
    from common.methods.cocabo.bandit import category_rewards, replay_exp3

    codes = np.array([[0, 0], [1, 0], [0, 1], [1, 0], [0, 0]])
    values = np.array([5.0, 1.0, 2.0, 0.5, 3.0])
    active = np.array([[1, 1], [1, 0], [1, 1], [1, 0], [1, 1]], dtype=bool)
    # variable 1's choice 0 was used only where the values were 5 and 3: its best, 3, is worse
    # than choice 1's 2
    rewards = category_rewards(codes, values, active)
    assert rewards[1] == pytest.approx(0.0)
    assert category_rewards(codes, values)[1] == pytest.approx(1.0)  # imputed 0.5 counted
    masked = replay_exp3(codes, values, (2, 2), n_init=1, horizon=50, active=active)
    unmasked = replay_exp3(codes, values, (2, 2), n_init=1, horizon=50)
    assert not np.allclose(masked[1], unmasked[1])
    np.testing.assert_allclose(masked[0], unmasked[0])  # variable 0 is always used
