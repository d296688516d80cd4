"""CASMOPOLITAN's restart centres: GP-UCB on an auxiliary GP of the earlier restarts' bests.

Wan et al., "Think global and act local: Bayesian optimisation over high-dimensional categorical and
mixed search spaces", ICML 2021, as written in B. Ru, "Bayesian Optimisation for Automated Machine
Learning", DPhil thesis, University of Oxford, 2022, §5.6, Eq. 5.13. When a trust region collapses,
the next restart is centred at the random point of the space with the highest upper confidence bound
under a GP fitted to the best observation of every finished restart, so a new restart goes where the
earlier ones suggest promise but have not looked. The trust-region *rules* (when to restart, which
observations were the restarts' bests) live in :mod:`common.methods.casmopolitan.trust_region`; this
module fits the model.

>>> centre = choose_restart_centre(space, X, values, state, rng, exclude=taken)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from common.acquisition.functions import evaluate, upper_confidence_bound
from common.log import warn
from common.models.kernel_choice import fit_choosing
from common.models.kernels.mixture import casmopolitan_kernels

if TYPE_CHECKING:
    from common.methods.casmopolitan.trust_region import TrustRegionState
    from common.space.configset import ConfigSet
    from common.space.mixed_space import MixedSpace


def restart_candidates(
    X: np.ndarray, values: np.ndarray, state: TrustRegionState
) -> tuple[np.ndarray, np.ndarray]:
    """The auxiliary GP's data: the best observation of every earlier restart."""
    idx = np.asarray(state.restart_bests, dtype=int)
    return X[idx], values[idx]


def choose_restart_centre(
    space: MixedSpace,
    X: np.ndarray,
    values: np.ndarray,
    state: TrustRegionState,
    rng: np.random.Generator,
    *,
    kappa: float = 2.0,
    n_candidates: int | None = None,
    exclude: ConfigSet | None = None,
    warpings: Sequence[str] = ("copula",),
) -> np.ndarray:
    """The next restart's centre: argmax of GP-UCB over random candidates (Ru's thesis, Eq. 5.13).

    The auxiliary GP (CASMOPOLITAN's kernel, its form chosen by the MAP objective:
    :mod:`common.models.kernel_choice`) is fitted to the best point of every earlier
    restart; candidates are uniform over the space, ``min(100·dim, 2000)`` of them, without those
    in ``exclude`` (a :class:`common.space.configset.ConfigSet`); its targets' warping is chosen
    among ``warpings`` (:func:`common.models.kernel_choice.fit_choosing`). On a numerical failure
    the best random candidate by distance from the earlier bests is used, with a warning.
    """
    n_candidates = n_candidates or min(100 * space.dim, 2000)
    cands = space.sample(n_candidates, rng)
    if exclude is not None:
        fresh = ~exclude.contains(cands)
        cands = cands[fresh] if fresh.any() else cands
    Xa, ya = restart_candidates(X, values, state)
    if len(Xa) == 0:
        return cands[0]
    cat, cont = list(space.cat_dims), list(space.cont_dims)
    try:
        model, _ = fit_choosing(Xa, ya, casmopolitan_kernels(cont, cat), warpings=warpings)
        scores = evaluate(upper_confidence_bound(model, kappa), cands)
        if not np.all(np.isfinite(scores)):
            raise FloatingPointError("non-finite UCB values")
        return cands[int(np.argmax(scores))]
    except Exception as err:  # far from the earlier bests instead
        warn(f"Restart GP failed ({err}); restarting far from earlier bests.", cause="restart gp")
        diff = (cands[:, None, :] != Xa[None, :, :]).sum(-1).min(axis=1)
        return cands[int(np.argmax(diff))]
