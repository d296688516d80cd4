"""CoCaBO: EXP3 bandits choose the categories, a GP with the mixture kernel the continuous values.

Ru, Alvi, Nguyen, Osborne, Roberts. "Bayesian optimisation over multiple continuous and categorical
inputs", ICML 2020; also B. Ru, "Bayesian Optimisation for Automated Machine Learning", DPhil
thesis, University of Oxford, 2022, ch. 5, and A. S. Alvi, "Practical Bayesian optimisation for
hyperparameter tuning", DPhil thesis, University of Oxford, 2019, ch. 5.

>>> strategy = CoCaBOOptions(n_init=10).make(BusyPolicy())
>>> configs = strategy.suggest(space, history, 1, np.random.default_rng(0))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from common.acquisition.feasibility import effective_values, feasibility
from common.acquisition.functions import upper_confidence_bound
from common.batch.busy import BusyPolicy
from common.batch.greedy import greedy_batch
from common.batch.pending import encode_pending
from common.methods.cocabo.bandit import draw_categories, draw_category_batch, replay_exp3
from common.methods.strategy import Strategy, canonical_inputs, random_configs
from common.models.gp import WARM_FIT_MAXITER
from common.models.kernels.mixture import cocabo_kernel
from common.models.refit import constraint_fitter, fit_or_condition
from common.optim.continuous import maximize_continuous
from common.space.configset import ConfigSet
from common.space.history import History
from common.space.mixed_space import MixedSpace

if TYPE_CHECKING:
    from common.methods.cocabo.options import CoCaBOOptions


class CoCaBO(Strategy):
    """CoCaBO: one EXP3 bandit per categorical, GP-UCB over the continuous (and integer) dims.

    A batch (``n > 1``) takes its categories from EXP3.M; busy points (pending configurations and
    the batch's earlier picks) are handled as ``busy`` says (PLAyBOOK's hard local penalisation by
    default, see :mod:`common.batch.penalization`).
    """

    def __init__(self, options: CoCaBOOptions, busy: BusyPolicy = BusyPolicy()) -> None:
        super().__init__(busy)
        self.options = options

    def suggest(
        self, space: MixedSpace, history: History, n: int, rng: np.random.Generator
    ) -> list[dict[str, Any]]:
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
        taken = ConfigSet(space, X)
        taken.add(busy)
        best = X[np.argsort(y)[:3]]

        def pick(i: int, busy_rows: np.ndarray) -> np.ndarray:
            acqf = self.busy_acquisition(
                lambda m: upper_confidence_bound(m, opts.kappa),
                model,
                busy_rows,
                cont,
                cat,
                space.n_choices,
                rng,
                canonical=canonical_inputs(space),
                feasibility=feasible,
            )
            template = np.zeros(space.dim)
            template[cat] = categories[i]
            x, _ = maximize_continuous(
                acqf,
                template,
                cont,
                rng,
                extra_starts=best[:, cont],
                snap=space.snap,
                exclude=taken.contains,
            )
            return x

        return space.decode(greedy_batch(pick, len(categories), busy, taken))
