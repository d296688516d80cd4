"""``BOFMSampler``: BO-FM as a drop-in Optuna sampler."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from optuna.samplers import BaseSampler
from optuna.trial import FrozenTrial

from common.bofm import BOFMOptions
from optuna_plugins._base import MixedBOSampler


class BOFMSampler(MixedBOSampler):
    """BO with frequency-modulated kernels (Oh et al., UAI 2021) for float, int and categorical.

    A GP with the ModLap kernel treats each categorical as a complete graph and each integer with
    few values as a path graph (ordered), modulated by the distance of the float (and large int)
    values; log-EI is maximised by alternating graph hill climbing and L-BFGS-B. A parameter's
    first trial (and one whose new range excludes the model's value) goes to
    ``independent_sampler``.

    Example::

        study = optuna.create_study(sampler=BOFMSampler(seed=0))
        study.optimize(objective, n_trials=100)

    Args:
        seed: Seed of the sampler's own random generator (global RNGs are never touched).
        n_startup_trials, independent_sampler, warn_independent_sampling: As for every mixbo
            sampler, see :class:`optuna_plugins._base.MixedBOSampler`.
        graphs: Optional ``{param_name: adjacency}``: a symmetric non-negative matrix over a
            categorical's choices (in their order) or an integer's values, replacing the default
            complete (categorical) or path (integer) graph.
        max_path_values: Integers with at most this many values are path graphs; larger ones are
            modelled as continuous (default 20).
        pending, penalizer, lipschitz: How running trials count (PLAyBOOK by default); see
            :class:`optuna_plugins._base.MixedBOSampler`.
        constraints_func: Constraint values of a finished trial (feasible when each is ≤ 0), as
            Optuna's samplers take it; see :class:`optuna_plugins._base.MixedBOSampler`.
    """

    def __init__(
        self,
        *,
        seed: int | None = None,
        n_startup_trials: int = 10,
        independent_sampler: BaseSampler | None = None,
        warn_independent_sampling: bool = True,
        graphs: Mapping[str, Any] | None = None,
        max_path_values: int | None = None,
        pending: str = "playbook",
        penalizer: str = "hlp",
        lipschitz: str = "local",
        constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
    ) -> None:
        super().__init__(
            BOFMOptions(graphs=graphs or {}, max_path_values=max_path_values),
            seed=seed,
            n_startup_trials=n_startup_trials,
            independent_sampler=independent_sampler,
            warn_independent_sampling=warn_independent_sampling,
            pending=pending,
            penalizer=penalizer,
            lipschitz=lipschitz,
            constraints_func=constraints_func,
        )
