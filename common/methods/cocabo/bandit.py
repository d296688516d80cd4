"""EXP3 bandits for CoCaBO's categorical variables, replayed from the ordered history.

One bandit per categorical variable; all share the joint reward (Ru et al., ICML 2020; Algorithm 5
of B. Ru, "Bayesian Optimisation for Automated Machine Learning", DPhil thesis, University of
Oxford, 2022; Auer et al. 2002, EXP3). Weights are kept in log space, rewards are ranks in [0, 1].
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

    As in CoCaBO's code, a category is rewarded with the best value (minimisation) seen so far
    among the observations that chose it: BO is after the best value, not the average one. The
    reward is that best value's rank among the *categories* of the variable seen so far: the
    fraction of the other categories whose best is worse (ties count half), in [0, 1] as EXP3's
    analysis assumes, and unmoved by a few huge values. **Departure:** the rank among all
    observations, our earlier normalisation, gives every category that ever produced a good
    value nearly 1 (the best category 1.0, the runner-up 0.99), so the bandits hardly separated;
    ranked among categories, the categories spread evenly over [0, 1] as the unnormalised values
    of the paper's code do, and CoCaBO reaches the paper's figures (see docs/decisions.md).
    ``active`` (same shape as ``codes``) leaves out observations
    where a variable was not used (a conditional space's imputed choice).
    """
    n_choices = tuple(int(k) + 1 for k in codes.max(axis=0, initial=0))
    rewards = np.zeros(codes.shape[1])
    for t, i, _, reward in _rewarded_pulls(codes, values, n_choices, 0, active):
        if t == len(codes) - 1:
            rewards[i] = reward
    return rewards


def _rewarded_pulls(codes, values, n_choices, start: int, active=None):
    """``(t, variable, arm, reward)`` for every pull from observation ``start`` on, in order:
    each variable's best value per category so far, kept up to date in one pass over the
    history, ranked by :func:`rank_among_categories`. Variables with one choice, and those an
    observation did not use (``active``), are not pulled."""
    bests = [np.full(k, np.inf) for k in n_choices]
    chosen = [np.zeros(k, dtype=bool) for k in n_choices]
    for t in range(len(codes)):
        for i, k in enumerate(n_choices):
            if active is not None and not active[t, i]:
                continue
            arm = int(codes[t, i])
            chosen[i][arm] = True
            bests[i][arm] = min(bests[i][arm], float(values[t]))
            if t >= start and k > 1:
                yield t, i, arm, rank_among_categories(bests[i], chosen[i], arm)


def rank_among_categories(bests: np.ndarray, chosen: np.ndarray, arm: int) -> float:
    """The fraction of the other ``chosen`` categories whose best value is worse than ``arm``'s
    (ties count half); 0 when ``arm`` was not chosen or no other category was."""
    others = int(chosen.sum()) - 1
    if not chosen[arm] or others < 1:
        return 0.0
    compared = bests[chosen]
    worse = float((compared > bests[arm]).sum())
    ties = float((compared == bests[arm]).sum()) - 1.0
    return (worse + 0.5 * ties) / others


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
    for _, i, arm, reward in _rewarded_pulls(codes, values, n_choices, max(n_init, 1), active):
        p = exp3_probabilities(log_w[i], gammas[i])
        log_w[i] = exp3_update(log_w[i], arm, reward, p[arm], gammas[i])
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
