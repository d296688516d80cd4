"""EXP3 bandits for CoCaBO's categorical variables, replayed from the ordered history.

One bandit per categorical variable; all share the joint reward (Ru et al. 2020, Alg. 5; Auer et al.
2002, EXP3). Weights are kept in log space, rewards are ranks in [0, 1].
"""

from __future__ import annotations

import math

import numpy as np


def exp3_gamma(n_arms: int, horizon: int) -> float:
    """Auer's exploration rate ``min(1, sqrt(N ln N / ((e − 1) g)))`` with ``g = 2T/3``."""
    if n_arms <= 1:
        return 0.0
    g = 2.0 * max(horizon, 1) / 3.0
    return min(1.0, math.sqrt(n_arms * math.log(n_arms) / ((math.e - 1.0) * g)))


def exp3_probabilities(log_weights: np.ndarray, gamma: float) -> np.ndarray:
    """``p = (1 − γ) w / Σw + γ / N``, computed stably from log weights."""
    w = np.exp(log_weights - np.max(log_weights))
    return (1.0 - gamma) * w / w.sum() + gamma / len(log_weights)


def exp3_update(
    log_weights: np.ndarray, arm: int, reward: float, prob: float, gamma: float
) -> np.ndarray:
    """Importance-weighted update of the pulled arm: ``w_a ← w_a · exp(γ r / (p_a N))``."""
    out = log_weights.copy()
    out[arm] += gamma * reward / (prob * len(log_weights))
    return out


def category_rewards(
    codes: np.ndarray, values: np.ndarray, active: np.ndarray | None = None
) -> np.ndarray:
    """Reward of each variable's chosen category at the last observation of ``codes``/``values``.

    The reward of category ``v`` of variable ``i`` is the rank of the best value (minimisation) seen
    so far among observations with ``h_i = v``: the fraction of all observations that are worse, in
    [0, 1]. Ranks, unlike min–max scaling, are not flattened by a few huge values. ``active``
    (same shape as ``codes``) leaves out observations where a variable was not used (a
    conditional space's imputed choice).
    """
    last = codes[-1]
    used = np.ones(codes.shape, dtype=bool) if active is None else active
    rewards = np.empty(codes.shape[1])
    for i, arm in enumerate(last):
        best = float(values[(codes[:, i] == arm) & used[:, i]].min(initial=np.inf))
        rewards[i] = float((values > best).sum()) / max(len(values) - 1, 1)
    return rewards


def replay_exp3(
    codes: np.ndarray,
    values: np.ndarray,
    n_choices: tuple[int, ...],
    n_init: int,
    horizon: int,
    active: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Log weights of every variable's bandit after replaying the history.

    ``codes`` is the ``(n, n_cat)`` integer array of chosen categories in trial order. The first
    ``n_init`` observations are the initial design and do not update the weights; each later one is
    a pull of every bandit, rewarded with :func:`category_rewards`; with ``active`` (a conditional
    space), only of the bandits of the variables that observation used.
    """
    log_w = [np.zeros(k) for k in n_choices]
    gammas = [exp3_gamma(k, horizon) for k in n_choices]
    for t in range(max(n_init, 1), len(codes)):
        used = None if active is None else active[: t + 1]
        rewards = category_rewards(codes[: t + 1], values[: t + 1], used)
        for i, k in enumerate(n_choices):
            if k <= 1 or (used is not None and not used[t, i]):
                continue
            p = exp3_probabilities(log_w[i], gammas[i])
            arm = int(codes[t, i])
            log_w[i] = exp3_update(log_w[i], arm, rewards[i], p[arm], gammas[i])
    return log_w


def draw_categories(
    log_weights: list[np.ndarray], horizon: int, rng: np.random.Generator
) -> np.ndarray:
    """One category per variable from its EXP3 distribution."""
    out = np.empty(len(log_weights), dtype=int)
    for i, lw in enumerate(log_weights):
        p = exp3_probabilities(lw, exp3_gamma(len(lw), horizon))
        out[i] = rng.choice(len(lw), p=p)
    return out


def exp3m_probabilities(log_weights: np.ndarray, gamma: float, b: int) -> np.ndarray:
    """EXP3.M marginals for ``b`` distinct plays (Uchiya et al. 2010): sum ``b``, each at most 1.

    Weights above the cap ``α`` (solving ``α / Σ_i min(w_i, α) = (1/b − γ/N) / (1 − γ)``) are
    capped so that no arm's marginal exceeds one.
    """
    k = len(log_weights)
    w = np.exp(log_weights - np.max(log_weights))
    threshold = (1.0 / b - gamma / k) / (1.0 - gamma) if gamma < 1 else np.inf
    if w.max() / w.sum() >= threshold:
        order = np.sort(w)[::-1]
        for n_capped in range(1, k):
            rest = order[n_capped:].sum()
            alpha = threshold * rest / (1.0 - n_capped * threshold)
            if order[n_capped - 1] >= alpha >= order[n_capped]:
                w = np.minimum(w, alpha)
                break
    p = b * ((1.0 - gamma) * w / w.sum() + gamma / k)
    return np.clip(p, 0.0, 1.0)


def dependent_rounding(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """DepRound (Gandhi et al. 2006): distinct indices, ``i`` included with probability ``p_i``."""
    p = np.array(p, dtype=float)
    eps = 1e-9
    while True:
        frac = np.flatnonzero((p > eps) & (p < 1 - eps))
        if len(frac) < 2:
            break
        i, j = frac[0], frac[1]
        a, c = min(1 - p[i], p[j]), min(p[i], 1 - p[j])
        if rng.random() < c / (a + c):
            p[i], p[j] = p[i] + a, p[j] - a
        else:
            p[i], p[j] = p[i] - c, p[j] + c
    return np.flatnonzero(p > 1 - eps)


def draw_category_batch(
    log_weights: list[np.ndarray], horizon: int, b: int, rng: np.random.Generator
) -> np.ndarray:
    """``b`` category vectors for one batch (EXP3.M per variable, CoCaBO's batch variant).

    Each variable plays ``b`` distinct arms when it has more than ``b``; otherwise every arm is
    played ``b // N`` times and the remainder is drawn by EXP3.M. Arms are shuffled across rows.
    """
    out = np.empty((b, len(log_weights)), dtype=int)
    for v, lw in enumerate(log_weights):
        k = len(lw)
        gamma = exp3_gamma(k, horizon)
        arms = list(np.tile(np.arange(k), b // k))
        extra = b % k
        if extra:
            arms += list(dependent_rounding(exp3m_probabilities(lw, gamma, extra), rng))
        out[:, v] = rng.permutation(np.asarray(arms[:b], dtype=int))
    return out
