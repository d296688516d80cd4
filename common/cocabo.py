"""CoCaBO: EXP3 bandits choose the categories, a GP with the mixture kernel the continuous values.

Ru, Alvi, Nguyen, Osborne, Roberts. "Bayesian optimisation over multiple continuous and categorical
inputs", ICML 2020 (seed 000 ch. 5, seed 002 ch. 5).

>>> strategy = CoCaBOOptions(n_init=10).make(BusyPolicy())
>>> configs = strategy.suggest(space, history, 1, np.random.default_rng(0))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from common.busy import BusyPolicy
from common.configset import ConfigSet
from common.history import History
from common.space import MixedSpace
from common.strategy import (
    MethodOptions,
    Strategy,
    canonical_inputs,
    check_integer,
    check_number,
    constraint_fitter,
    encode_pending,
    fit_or_condition,
    random_configs,
)


@dataclass(frozen=True)
class CoCaBOOptions(MethodOptions):
    """CoCaBO's options. ``n_init`` observations form the initial design and do not update the
    bandits; ``horizon`` is the budget that sets EXP3's exploration rate (Auer's schedule, the
    paper's 200); ``kappa`` is UCB's exploration weight (the paper's 2)."""

    n_init: int = 10
    kappa: float = 2.0
    horizon: int = 200

    def __post_init__(self) -> None:
        check_integer("n_init", self.n_init, 0)
        check_number("kappa", self.kappa, 0.0)
        check_integer("horizon", self.horizon, 1)

    def make(self, busy: BusyPolicy) -> CoCaBO:
        return CoCaBO(self, busy)


class CoCaBO(Strategy):
    """CoCaBO: one EXP3 bandit per categorical, GP-UCB over the continuous (and integer) dims.

    A batch (``n > 1``) takes its categories from EXP3.M; busy points (pending configurations and
    the batch's earlier picks) are handled as ``busy`` says (PLAyBOOK's hard local penalisation by
    default, see :mod:`common.penalization`).
    """

    def __init__(
        self, options: CoCaBOOptions = CoCaBOOptions(), busy: BusyPolicy = BusyPolicy()
    ) -> None:
        super().__init__(busy)
        self.options = options

    def suggest(
        self, space: MixedSpace, history: History, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
        from common.acquisition import maximize_continuous, upper_confidence_bound
        from common.bandit import draw_categories, draw_category_batch, replay_exp3
        from common.constraints import effective_values, feasibility
        from common.gp import WARM_FIT_MAXITER
        from common.kernels import cocabo_kernel

        if len(history) == 0 or space.dim == 0:
            return random_configs(space, n, rng)
        X = space.encode(history.configs)
        y = effective_values(history)  # the bandits' rewards: feasible trials first
        cat, cont = list(space.cat_dims), list(space.cont_dims)
        opts = self.options
        active = space.active_mask(X)[:, cat] if space.conditions else None
        log_w = replay_exp3(
            X[:, cat].astype(int), y, space.n_choices, opts.n_init, opts.horizon, active
        )
        if n == 1:
            categories = draw_categories(log_w, opts.horizon, rng)[None]
        else:
            categories = draw_category_batch(log_w, opts.horizon, n, rng)

        def kernel():
            return cocabo_kernel(cont, cat)

        key = ("cocabo", space)
        model = fit_or_condition(self, key, X, history.values, kernel, 1, WARM_FIT_MAXITER)
        feasible = feasibility(
            history,
            model.train_targets.detach().numpy(),
            constraint_fitter(self, key, X, kernel, WARM_FIT_MAXITER),
        )
        busy = encode_pending(space, history)
        seen = ConfigSet(space, X)
        seen.add(busy)
        best = X[np.argsort(y)[:3]]
        rows: list[np.ndarray] = []
        for h in categories:
            acqf = self.busy_acquisition(
                lambda m: upper_confidence_bound(m, opts.kappa),
                model,
                np.vstack([busy, *rows]) if rows else busy,
                cont,
                cat,
                space.n_choices,
                rng,
                canonical=canonical_inputs(space),
                feasibility=feasible,
            )
            template = np.zeros(space.dim)
            template[cat] = h
            x, _ = maximize_continuous(
                acqf,
                template,
                cont,
                rng,
                extra_starts=best[:, cont],
                snap=space.snap,
                exclude=seen.contains,
            )
            rows.append(x[None])
            seen.add(x[None])
        return space.decode(np.vstack(rows))
