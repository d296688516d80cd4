"""CoCaBO: EXP3 bandits choose the categories, a GP with the mixture kernel the continuous values.

Ru, Alvi, Nguyen, Osborne, Roberts. "Bayesian optimisation over multiple continuous and categorical
inputs", ICML 2020 (seed 000 ch. 5, seed 002 ch. 5).

>>> strategy = CoCaBO(n_init=10)
>>> configs = strategy.suggest(space, history, 1, np.random.default_rng(0))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from common.history import History
from common.space import MixedSpace
from common.strategy import Strategy, encode_pending, fit_cached, random_configs


class CoCaBO(Strategy):
    """CoCaBO: one EXP3 bandit per categorical, GP-UCB over the continuous (and integer) dims.

    ``n_init`` observations form the initial design and do not update the bandits; ``horizon`` is
    the budget that sets EXP3's exploration rate (Auer's schedule); ``kappa`` is UCB's exploration
    weight. A batch (``n > 1``) takes its categories from EXP3.M; busy points (pending
    configurations and the batch's earlier picks) are handled as ``pending`` says (PLAyBOOK's hard
    local penalisation by default, see :mod:`common.penalization`).
    """

    def __init__(
        self,
        *,
        n_init: int = 10,
        kappa: float = 2.0,
        horizon: int = 200,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
    ):
        super().__init__(pending=pending, penalizer=penalizer, lipschitz=lipschitz)
        self.n_init = n_init
        self.kappa = kappa
        self.horizon = horizon

    def suggest(
        self, space: MixedSpace, history: History, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        from common.acquisition import maximize_continuous, upper_confidence_bound
        from common.bandit import draw_categories, draw_category_batch, replay_exp3
        from common.kernels import cocabo_kernel

        if len(history) == 0 or space.dim == 0:
            return random_configs(space, n, rng)
        X = space.encode(history.configs)
        y = history.values
        cat, cont = list(space.cat_dims), list(space.cont_dims)
        log_w = replay_exp3(X[:, cat].astype(int), y, space.n_choices, self.n_init, self.horizon)
        if n == 1:
            categories = draw_categories(log_w, self.horizon, rng)[None]
        else:
            categories = draw_category_batch(log_w, self.horizon, n, rng)
        model = fit_cached(self, ("cocabo", space), X, y, lambda: cocabo_kernel(cont, cat))
        busy = encode_pending(space, history)
        best = X[np.argsort(y)[:3]]
        rows: list[np.ndarray] = []
        for h in categories:
            acqf = self.busy_acquisition(
                lambda m: upper_confidence_bound(m, self.kappa),
                model,
                np.vstack([busy, *rows]) if rows else busy,
                cont,
                cat,
                space.n_choices,
                rng,
            )
            template = np.zeros(space.dim)
            template[cat] = h
            x, _ = maximize_continuous(acqf, template, cont, rng, extra_starts=best[:, cont])
            rows.append(x[None])
        return space.decode(np.vstack(rows))
